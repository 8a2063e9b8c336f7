/* `hangdoc demo`: start a real hung process tree, diagnose it, end it. */
#pragma once

#include "options.h"

/* Returns the exit status of the diagnosis, or EXIT_INTERNAL when the tree could not be set up. */
int hangdoc_demo(struct hangdoc_options *options);
