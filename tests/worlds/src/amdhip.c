/* clr: libamdhip64.so. NEEDED libhsa-runtime64.so.1 (rocm-runtime). */
int hsa_init(void);
char *getenv(const char *);
int hipInit(unsigned flags) { return hsa_init() + (int)flags + (getenv("HIP_VISIBLE_DEVICES") != 0); }
