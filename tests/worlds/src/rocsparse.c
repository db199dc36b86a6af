/* rocsparse: compiled with -g straight from the rocsparse-src store path and not
 * stripped, so that path is in .debug_* only: the "elf-debug" evidence. Deliberately
 * includes no header from the store and uses no __FILE__. */
int hipInit(unsigned flags);
char *getenv(const char *);
int rocsparse_create_handle(void) { return hipInit(2) + (getenv("ROCSPARSE_LAYER") != 0); }
