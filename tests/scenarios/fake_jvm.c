/* A stand-in for HotSpot's libjvm.so (meson names it after the library 'jvm') whose VMStructs table is of a JDK
 * hangdoc does not know: the exports that describe the table are there, the fields it reads are not. A process
 * that maps it must get a note saying so, and the verdict its threads give. */
#include <stddef.h>
#include <stdint.h>

struct vm_struct_entry {
    const char *type_name;
    const char *field_name;
    const char *type_string;
    int32_t is_static;
    uint64_t offset;
    void *address;
};

static struct vm_struct_entry entries[] = {
    { "FutureThread", "_renamed_state", "int", 0, 8, NULL },
    { NULL, NULL, NULL, 0, 0, NULL },
};

#define EXPORTED __attribute__((visibility("default")))
EXPORTED struct vm_struct_entry *gHotSpotVMStructs = entries;
EXPORTED uint64_t gHotSpotVMStructEntryArrayStride = sizeof(struct vm_struct_entry);
EXPORTED uint64_t gHotSpotVMStructEntryTypeNameOffset = offsetof(struct vm_struct_entry, type_name);
EXPORTED uint64_t gHotSpotVMStructEntryFieldNameOffset = offsetof(struct vm_struct_entry, field_name);
EXPORTED uint64_t gHotSpotVMStructEntryTypeStringOffset = offsetof(struct vm_struct_entry, type_string);
EXPORTED uint64_t gHotSpotVMStructEntryIsStaticOffset = offsetof(struct vm_struct_entry, is_static);
EXPORTED uint64_t gHotSpotVMStructEntryOffsetOffset = offsetof(struct vm_struct_entry, offset);
EXPORTED uint64_t gHotSpotVMStructEntryAddressOffset = offsetof(struct vm_struct_entry, address);

EXPORTED int fake_jvm_entries(void);
int fake_jvm_entries(void)
{
    return (int)(sizeof entries / sizeof entries[0]);
}
