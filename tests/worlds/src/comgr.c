/* rocm-comgr: lib/libamd_comgr.so.2. Nothing NEEDs it: clr's libamdhip64.so dlopens it
 * by soname through its RUNPATH (as Debian's real libamdhip64.so.5 does), and
 * rocsparse's RUNPATH points here without naming it. */
int amd_comgr_get_version(void) { return 2; }
