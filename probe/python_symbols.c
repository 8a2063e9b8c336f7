/* CPython's symbols from its ELF file (python_symbols.h), through elf_objects.h. */
#include "python_symbols.h"

#include "elf_objects.h"
#include "util.h"

enum { RUNTIME, VERSION, CODE_TYPE };

bool probe_python_read_symbols(pid_t pid, const struct hd_mapping *mapping, struct probe_python_symbols *symbols,
                               const char **why)
{
    /* a build that exports _PyRuntime exports Py_Version too when it has one (3.10 has none): the larger .symtab
     * only for an interpreter that hides its symbols */
    struct probe_elf_object wanted[] = {
        [RUNTIME] = { .name = "_PyRuntime", .size_min = 256 },
        [VERSION] = { .name = "Py_Version", .size_min = 4, .optional = true },
        [CODE_TYPE] = { .name = "PyCode_Type", .size_min = 64 },
    };
    struct probe_elf_file file;
    *symbols = (struct probe_python_symbols){ 0 };
    if (!probe_elf_read_objects(pid, mapping, NULL, wanted, COUNT(wanted), &file, why))
        return false;
    *symbols = (struct probe_python_symbols){
        .runtime = wanted[RUNTIME].value,
        .runtime_size = wanted[RUNTIME].size,
        .version = wanted[VERSION].value,
        .code_type = wanted[CODE_TYPE].value,
        .fixed_address = file.fixed_address,
        .first_load = file.first_load,
    };
    return true;
}

bool probe_python_load_bias(const struct probe_python_symbols *symbols, const struct hd_mapping *first,
                            uint64_t *bias)
{
    struct probe_elf_file file = { .fixed_address = symbols->fixed_address, .first_load = symbols->first_load };
    return probe_elf_load_bias(&file, first, bias);
}
