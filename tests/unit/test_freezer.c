/* The cgroup freezer's parsers (probe/freezer.h): mountinfo lines, /proc/<pid>/cgroup texts, and the directory a
 * cgroup has under a mount, over the odd inputs (escaped mount points, namespaced roots, paths with ':'). */
#include "freezer.h"

#include <criterion/criterion.h>
#include <string.h>

static const char *const hybrid_mountinfo =
    "25 30 0:23 / /sys rw,nosuid - sysfs sysfs rw\n"
    "31 25 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n"
    "32 31 0:27 / /sys/fs/cgroup/unified rw,nosuid shared:10 - cgroup2 cgroup2 rw,nsdelegate\n"
    "36 31 0:31 / /sys/fs/cgroup/cpu,cpuacct rw shared:15 - cgroup cgroup rw,cpu,cpuacct\n"
    "37 31 0:32 / /sys/fs/cgroup/freezer rw shared:16 - cgroup cgroup rw,freezer\n";

Test(freezer, finds_both_hierarchies_of_a_hybrid_machine)
{
    struct probe_cgroup_mounts mounts;
    probe_parse_cgroup_mounts(hybrid_mountinfo, &mounts);
    cr_assert_str_eq(mounts.unified, "/sys/fs/cgroup/unified");
    cr_assert_str_eq(mounts.unified_root, "/");
    cr_assert_str_eq(mounts.freezer, "/sys/fs/cgroup/freezer");
}

Test(freezer, a_controller_name_inside_another_word_is_not_the_freezer)
{
    struct probe_cgroup_mounts mounts;
    probe_parse_cgroup_mounts("40 31 0:40 / /x rw - cgroup cgroup rw,notfreezer\n"
                              "41 31 0:41 / /y rw - cgroup cgroup rw,freezerish\n", &mounts);
    cr_assert_str_eq(mounts.freezer, "");
    cr_assert_str_eq(mounts.unified, "");
}

Test(freezer, unescapes_a_mount_point_and_keeps_a_namespaced_root)
{
    struct probe_cgroup_mounts mounts;
    probe_parse_cgroup_mounts("50 1 0:50 /kubepods/pod1 /my\\040cgroups rw - cgroup2 cgroup2 rw\n", &mounts);
    cr_assert_str_eq(mounts.unified, "/my cgroups");
    cr_assert_str_eq(mounts.unified_root, "/kubepods/pod1");
}

Test(freezer, a_line_cut_short_or_without_its_separator_is_skipped)
{
    struct probe_cgroup_mounts mounts;
    probe_parse_cgroup_mounts("50 1 0:50 / /a rw cgroup2 cgroup2 rw\n51 1 0:5", &mounts);
    cr_assert_str_eq(mounts.unified, "");
}

Test(freezer, reads_the_v2_and_the_freezer_lines_of_proc_cgroup)
{
    struct probe_cgroup_paths paths;
    probe_parse_cgroup_paths("9:name=systemd:/\n6:freezer:/docker/abc\n4:memory:/x\n0::/system.slice/a:b.service\n",
                             &paths);
    cr_assert_str_eq(paths.unified, "/system.slice/a:b.service", "a path may hold ':'");
    cr_assert_str_eq(paths.freezer, "/docker/abc");
}

Test(freezer, a_shared_hierarchy_that_names_the_freezer_among_others_counts)
{
    struct probe_cgroup_paths paths;
    probe_parse_cgroup_paths("3:cpu,freezer:/job\n", &paths);
    cr_assert_str_eq(paths.freezer, "/job");
    cr_assert_str_eq(paths.unified, "");
}

Test(freezer, garbage_names_no_cgroup)
{
    struct probe_cgroup_paths paths;
    probe_parse_cgroup_paths("0::relative\n6:freezer\n::\n", &paths);
    cr_assert_str_eq(paths.unified, "");
    cr_assert_str_eq(paths.freezer, "");
}

Test(freezer, a_cgroup_maps_to_its_directory_under_the_mount)
{
    char out[256];
    cr_assert(probe_cgroup_directory("/sys/fs/cgroup", "/", "/a/b", out, sizeof out));
    cr_assert_str_eq(out, "/sys/fs/cgroup/a/b");
    cr_assert(probe_cgroup_directory("/sys/fs/cgroup", "/", "/", out, sizeof out));
    cr_assert_str_eq(out, "/sys/fs/cgroup");
    cr_assert(probe_cgroup_directory("/c", "/pod", "/pod/x", out, sizeof out), "below a namespaced root");
    cr_assert_str_eq(out, "/c/x");
}

Test(freezer, a_cgroup_the_mount_does_not_show_or_that_climbs_has_no_directory)
{
    char out[256];
    cr_assert_not(probe_cgroup_directory("/c", "/pod", "/podcast/x", out, sizeof out));
    cr_assert_not(probe_cgroup_directory("/c", "/", "/a/../../etc", out, sizeof out));
    cr_assert_not(probe_cgroup_directory("", "/", "/a", out, sizeof out), "not mounted");
    cr_assert_not(probe_cgroup_directory("/c", "/", "/a", out, 4), "does not fit");
}
