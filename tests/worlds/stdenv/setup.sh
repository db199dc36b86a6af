# A model of nixpkgs' stdenv.mkDerivation for the split rebuilds (default.nix): the
# phases and the multiple-outputs hooks, written from nixpkgs' setup.sh,
# multiple-outputs.sh and the cmake setup hook (facts in docs/nixpkgs-outputs.md), in
# their order:
#
#   1. output variables: outputDev, outputBin, outputInclude, outputLib, outputDoc,
#      outputDevdoc, outputMan, outputDevman, outputInfo (_overrideFirst: the package's
#      own value, else the first candidate that is an output);
#   2. configure: with more than `out`, $configureFlags gets --bindir, --includedir,
#      --libdir, … and $installFlags pkgconfigdir=, aclocaldir= (_multioutConfig); the
#      cmake hook's $cmakeFlags always name CMAKE_INSTALL_PREFIX and the
#      CMAKE_INSTALL_*DIR of those outputs;
#   3. the package's installPhase (its build and install: it reads those flags or not),
#      then postInstall;
#   4. fixup: preFixup, then the preFixupHooks _multioutDocs and _multioutDevs (moves,
#      the .pc includedir= patch), then postFixup, then the postFixupHook
#      _multioutPropagateDev ($outputDev/nix-support/propagated-build-inputs).
#
# Left out: stripping, patchShebangs, patchelf --shrink-rpath and the other
# fixupOutput hooks (they would change the files of the unsplit package as much as the
# split one's; the worlds' packages are built without them).
set -eu -o pipefail
cd "$NIX_BUILD_TOP"
CFLAGS="-O2 -fPIC -ffile-prefix-map=$NIX_BUILD_TOP=/build"
LDNEW="-Wl,--enable-new-dtags"
hashof() { basename "$1" | cut -c1-32; }
. "$verbs"
getAllOutputNames() { echo $outputs; }
remove-references-to() { remove_references_to "$@"; }

# _overrideFirst VAR CANDIDATE…: unless VAR is set, the first candidate naming a
# non-empty variable (REMOVE names itself).
REMOVE=REMOVE
_overrideFirst() {
    local var=$1 c
    shift
    [ -z "${!var-}" ] || return 0
    for c in "$@"; do
        if [ -n "${!c-}" ]; then eval "$var=$c"; return 0; fi
    done
    echo "stdenv model: no output for $var among $*" >&2
    return 1
}
_overrideFirst outputDev dev out
_overrideFirst outputBin bin out
_overrideFirst outputInclude "$outputDev"
_overrideFirst outputLib lib out
_overrideFirst outputDoc doc out
_overrideFirst outputDevdoc devdoc REMOVE
_overrideFirst outputMan man "$outputBin"
_overrideFirst outputDevman devman devdoc "$outputMan"
_overrideFirst outputInfo info "$outputBin"

single=0
[ "$(getAllOutputNames)" = out ] && single=1
shareDocName=$(echo "$name" | sed 's/-[^a-zA-Z].*//')

# configure (_multioutConfig and the cmake hook)
configureFlags=${configureFlags-}
installFlags=${installFlags-}
if [ $single = 0 ]; then
    configureFlags="--bindir=${!outputBin}/bin --sbindir=${!outputBin}/sbin --includedir=${!outputInclude}/include --oldincludedir=${!outputInclude}/include --mandir=${!outputMan}/share/man --infodir=${!outputInfo}/share/info --docdir=${!outputDoc}/share/doc/$shareDocName --libdir=${!outputLib}/lib --libexecdir=${!outputLib}/libexec --localedir=${!outputLib}/share/locale $configureFlags"
    installFlags="pkgconfigdir=${!outputDev}/lib/pkgconfig m4datadir=${!outputDev}/share/aclocal aclocaldir=${!outputDev}/share/aclocal $installFlags"
fi
configureFlags="--prefix=$out $configureFlags"
cmakeFlags="-DCMAKE_INSTALL_PREFIX=$out -DCMAKE_INSTALL_BINDIR=${!outputBin}/bin -DCMAKE_INSTALL_SBINDIR=${!outputBin}/sbin -DCMAKE_INSTALL_INCLUDEDIR=${!outputInclude}/include -DCMAKE_INSTALL_OLDINCLUDEDIR=${!outputInclude}/include -DCMAKE_INSTALL_MANDIR=${!outputMan}/share/man -DCMAKE_INSTALL_INFODIR=${!outputInfo}/share/info -DCMAKE_INSTALL_DOCDIR=${!outputDoc}/share/doc/$shareDocName -DCMAKE_INSTALL_LIBDIR=${!outputLib}/lib -DCMAKE_INSTALL_LIBEXECDIR=${!outputLib}/libexec -DCMAKE_INSTALL_LOCALEDIR=${!outputLib}/share/locale -DCMAKE_INSTALL_NAME_DIR=${!outputLib}/lib -DCMAKE_BUILD_TYPE=Release ${cmakeFlags-}"

# install
eval "${installPhase-}"
eval "${postInstall-}"

# fixup
for o in $(getAllOutputNames); do
    if [ -e "${!o}" ]; then chmod -R u+w "${!o}"; fi
done
eval "${preFixup-}"

_multioutDocs() {
    moveToOutput share/info "${!outputInfo}"
    moveToOutput share/doc "${!outputDoc}"
    moveToOutput share/gtk-doc "${!outputDevdoc}"
    moveToOutput share/devhelp/books "${!outputDevdoc}"
    moveToOutput share/man "${!outputMan}"
    moveToOutput share/man/man3 "${!outputDevman}"
}
_multioutDevs() {
    [ $single = 0 ] || return 0
    moveToOutput include "${!outputInclude}"
    moveToOutput lib/pkgconfig "${!outputDev}"
    moveToOutput share/pkgconfig "${!outputDev}"
    moveToOutput lib/cmake "${!outputDev}"
    moveToOutput share/aclocal "${!outputDev}"
    for f in "${!outputDev}"/lib/pkgconfig/*.pc "${!outputDev}"/share/pkgconfig/*.pc; do
        [ -e "$f" ] || continue
        sed -i "/^includedir=/s,=\${prefix},=${!outputInclude}," "$f"
    done
}
_multioutPropagateDev() {
    [ $single = 0 ] || return 0
    local p=$outputDev o
    if [ -z "${propagatedBuildOutputs+1}" ]; then
        propagatedBuildOutputs=$(echo "$outputBin $outputInclude $outputLib" | tr -s ' ' '\n' |
            { grep -v -F "$p" || true; } | sort -u | tr '\n' ' ')
    fi
    [ -n "$(echo $propagatedBuildOutputs)" ] || return 0
    mkdir -p "${!p}"/nix-support
    for o in $propagatedBuildOutputs; do
        printf ' %s' "${!o}" >> "${!p}"/nix-support/propagated-build-inputs
    done
}
_multioutDocs
_multioutDevs
eval "${postFixup-}"
for o in $(getAllOutputNames); do mkdir -p "${!o}"; done
_multioutPropagateDev
# The tests' own check, last (not a nixpkgs attribute).
eval "${testCheck-}"
