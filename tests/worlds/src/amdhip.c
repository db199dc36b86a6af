/* clr: libamdhip64.so. NEEDED libhsa-runtime64.so.1 (rocm-runtime). Loads the code
 * object manager with dlopen("libamd_comgr.so.2") through its RUNPATH, without a
 * DT_NEEDED entry: the elf-runpath-dlopen evidence. */
int hsa_init(void);
char *getenv(const char *);
void *dlopen(const char *, int);
static const char comgr[] = "libamd_comgr.so.2";
int hip_load_comgr(void) { return dlopen(comgr, 1) != 0; }
int hipInit(unsigned flags) { return hsa_init() + (int)flags + (getenv("HIP_VISIBLE_DEVICES") != 0); }
