/* rocm-runtime: libhsa-runtime64.so.1. NEEDED libhelper.so (gcc-lib).
 * AMDGPU_IDS is a store path into libdrm, compiled in as a plain data string: the
 * "elf-string" evidence (it is a data file path, not a source file path). */
int helper_add(int a, int b);
static const char amdgpu_ids_path[] = AMDGPU_IDS;
const char *hsa_amdgpu_ids_path(void) { return amdgpu_ids_path; }
char *getenv(const char *);
int hsa_init(void) { return helper_add(1, getenv("HSA_ENABLE_SDMA") != 0); }
