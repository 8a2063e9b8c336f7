/* The link check of the rooms (meson.build): linked with every object of analysis, render and merge and the model
 * alone, so that a call from them into probe/, supervise/ or cmd/ fails the build. It is never run. */
int main(void);

int main(void)
{
    return 0;
}
