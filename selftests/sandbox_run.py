#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""sandbox_run.py [OPTION...] -- SETPRIV_ARG... -- ARGV...

Runs ARGV the way a container runtime or systemd's sandbox would, for
kpx_agent_sandbox.sh (one process: under TCG every exec of mount(8) costs up
to a second).  Run as root: it enters a mount namespace of its own (all
mounts private), changes only that namespace's mounts with mount(2), then
execs setpriv(1) with SETPRIV_ARGs (uid, capability sets, no_new_privs,
securebits) on ARGV.  In order:
  --proc OPTS          a new proc instance on /proc with OPTS
                       (hidepid=invisible: ProtectProc=; subset=pid)
  --inaccessible PATH  PATH (file or directory) replaced by a mode 000 one
  --ro-root            every mount read-only except those given by --rw
  --rw PATH            (with --ro-root) a mount that stays writable
  --tmpfs PATH         a new empty tmpfs on PATH (PrivateTmp=, /run)
  --bind SRC:DST       SRC bound read-only on DST (DST made on a tmpfs)
  --private-dev        a new /dev with null, zero, full, random, urandom,
                       tty, pts/, shm/ (PrivateDevices=)
  --ro PATH            PATH read-only: a mount remounted, else bound over
                       itself (/proc/sys as runc and ProtectKernelTunables=
                       mount it)
  --mask PATH          PATH hidden (runc's masked paths)
  --umask MASK"""
import ctypes
import os
import sys

CLONE_NEWNS = 0x00020000
MS_RDONLY, MS_NOSUID, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 32, 4096, 16384, 1 << 18

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                       ctypes.c_char_p]


def die(msg):
    print("sandbox_run: " + msg, file=sys.stderr)
    sys.exit(125)


def mount(src, dst, fstype, flags, data=None):
    enc = lambda s: s.encode() if s is not None else None
    if libc.mount(enc(src), enc(dst), enc(fstype), flags, enc(data)):
        e = ctypes.get_errno()
        die("mount %s on %s (%s, 0x%x): %s" % (src, dst, fstype, flags, os.strerror(e)))


def remount_ro(path):
    mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY)


def bind_ro(src, dst):
    mount(src, dst, None, MS_BIND)
    remount_ro(dst)


def mount_points():
    seen, out = set(), []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            mp = line.split()[4].encode().decode("unicode_escape")
            if mp not in seen:
                seen.add(mp)
                out.append(mp)
    return out


def main():
    args = sys.argv[1:]
    o = {"inaccessible": [], "rw": [], "tmpfs": [], "bind": [], "ro": [], "mask": []}
    proc = umask = None
    ro_root = private_dev = False
    while args and args[0] != "--":
        a = args.pop(0)
        if a == "--ro-root":
            ro_root = True
        elif a == "--private-dev":
            private_dev = True
        elif a == "--proc":
            proc = args.pop(0)
        elif a == "--umask":
            umask = int(args.pop(0), 8)
        elif a[2:] in o:
            o[a[2:]].append(args.pop(0))
        else:
            die("unknown option " + a)
    if not args:
        die("no --")
    args.pop(0)
    if "--" not in args:
        die("no ARGV")
    sp, argv = args[:args.index("--")], args[args.index("--") + 1:]

    if libc.unshare(CLONE_NEWNS):
        die("unshare: " + os.strerror(ctypes.get_errno()))
    mount(None, "/", None, MS_REC | MS_PRIVATE)

    # A mode 000 file and directory to bind over hidden paths, on a tmpfs
    # of this namespace, held by O_PATH descriptors (a later mount on /run
    # does not hide them).
    inacc = "/run/.sandbox-inaccessible"
    os.makedirs(inacc, exist_ok=True)
    mount("tmpfs", inacc, "tmpfs", 0, "mode=0755")
    open(inacc + "/file", "w").close()
    os.mkdir(inacc + "/dir")
    os.chmod(inacc + "/file", 0)
    os.chmod(inacc + "/dir", 0)
    fds = {k: os.open(inacc + "/" + k, os.O_PATH | os.O_CLOEXEC) for k in ("file", "dir")}

    def hide(p):
        if os.path.isdir(p):
            bind_ro("/proc/self/fd/%d" % fds["dir"], p)
        elif os.path.exists(p):
            bind_ro("/proc/self/fd/%d" % fds["file"], p)

    if proc:
        mount("proc", "/proc", "proc", 0, proc)
    for p in o["inaccessible"]:
        hide(p)
    if ro_root:
        for mp in mount_points():
            # (a mount point under a path hidden above is gone from view)
            if mp not in o["rw"] and os.path.exists(mp):
                remount_ro(mp)
    for p in o["tmpfs"]:
        mount("tmpfs", p, "tmpfs", 0, "mode=0755")
    for b in o["bind"]:
        src, dst = b.split(":", 1)
        os.makedirs(dst, exist_ok=True)
        bind_ro(src, dst)
    if private_dev:
        mount("tmpfs", "/dev", "tmpfs", MS_NOSUID, "mode=0755")
        for name, major, minor in (("null", 1, 3), ("zero", 1, 5), ("full", 1, 7),
                                   ("random", 1, 8), ("urandom", 1, 9), ("tty", 5, 0)):
            os.mknod("/dev/" + name, 0o20666, os.makedev(major, minor))
            os.chmod("/dev/" + name, 0o666)
        os.mkdir("/dev/pts")
        os.mkdir("/dev/shm")
        mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID, "mode=1777")
        os.symlink("/proc/self/fd", "/dev/fd")
    mps = set(mount_points())
    for p in o["ro"]:
        if p in mps:
            remount_ro(p)
        elif os.path.exists(p):
            bind_ro(p, p)
    for p in o["mask"]:
        hide(p)
    if umask is not None:
        os.umask(umask)
    os.execvp("setpriv", ["setpriv"] + sp + ["--"] + argv)


if __name__ == "__main__":
    main()
