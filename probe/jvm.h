/* A HotSpot JVM's Java threads and the monitors they wait for, read from its memory as the serviceability agent
 * does: libjvm.so exports gHotSpotVMStructs, a table of its own types' fields (their names, offsets and the
 * addresses of the static ones), and from it the thread list (ThreadsSMRSupport::_java_thread_list), each
 * JavaThread's OS thread, state and pending monitor, and each ObjectMonitor's owner and object. Nothing is
 * stopped, nothing of the JVM runs: no attach API, no SIGQUIT, which a wedged JVM would not answer.
 *
 * A monitor's owner is a JavaThread, or (a lock first taken without contention, then inflated) a lock record on
 * the owner's stack, told by the stack it lies in. The JVM is read while it runs: values that do not fit (a thread
 * count or a string length past its bound, a pointer that reads nothing) are left out, never guessed.
 */
#pragma once

#include "snapshot.h"

#include <stdbool.h>

/* Reads process->jvm for every process of the snapshot that maps libjvm.so. False only when memory ran out. */
bool probe_read_jvms(struct hd_snapshot *snapshot);
