/* t_dynamic: a dynamically linked program (PT_INTERP /lib/ld-linux-aarch64.so.1, Debian's
 * glibc as a shared library) starts through the interpreter: AT_BASE is where ld.so was
 * mapped and AT_ENTRY this program's entry, both ld.so and libc.so.6 are in the link map and
 * in /proc/self/maps, and libc works (stdio, malloc, threads, dlopen of libc itself).  A
 * missing interpreter is ENOENT, one that is not ELF ELIBBAD (EIO when shorter than an ELF
 * header), one without exec permission EACCES.
 * Passes on Linux 6.1 (refvm.sh --smp 2). */
#define _GNU_SOURCE
#include "tap.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char _start[];

static int seen_ld, seen_libc;
static uintptr_t ld_base;

static int each_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	if (info->dlpi_name && strstr(info->dlpi_name, "ld-linux-aarch64.so.1")) {
		seen_ld = 1;
		ld_base = info->dlpi_addr;
	}
	if (info->dlpi_name && strstr(info->dlpi_name, "libc.so.6"))
		seen_libc = 1;
	return 0;
}

/* A copy of this program at dst whose PT_INTERP names interp: 0 or -1. */
static int copy_with_interp(const char *dst, const char *interp)
{
	static char img[4 << 20];
	int fd = open((const char *)getauxval(AT_EXECFN), O_RDONLY); /* the path we ran from */
	ssize_t n = fd >= 0 ? read(fd, img, sizeof(img)) : -1;

	if (fd >= 0)
		close(fd);
	if (n < (ssize_t)sizeof(Elf64_Ehdr))
		return -1;
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;

	for (int i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr *ph = (Elf64_Phdr *)(img + eh->e_phoff + (size_t)i * eh->e_phentsize);

		if (ph->p_type != PT_INTERP || strlen(interp) + 1 > ph->p_filesz)
			continue;
		memset(img + ph->p_offset, 0, ph->p_filesz);
		memcpy(img + ph->p_offset, interp, strlen(interp));
		fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0755);
		if (fd < 0 || write(fd, img, (size_t)n) != n)
			return -1;
		close(fd);
		return 0;
	}
	return -1;
}

/* execve path in a child: the errno it failed with, or 0 when it ran. */
static int exec_errno(const char *path)
{
	int p[2], e = 0;

	if (pipe(p))
		return -1;
	pid_t pid = fork();

	if (pid == 0) {
		char *argv[] = { (char *)path, NULL };

		execve(path, argv, environ);
		e = errno;
		write(p[1], &e, sizeof(e));
		_exit(127);
	}
	close(p[1]);
	if (read(p[0], &e, sizeof(e)) != sizeof(e))
		e = 0;
	close(p[0]);
	waitpid(pid, NULL, 0);
	return e;
}

static void bad_interpreters(void)
{
	char text[100];
	int fd = open("/tmp/notelf.so", O_WRONLY | O_CREAT | O_TRUNC, 0755);

	memset(text, '#', sizeof(text));
	if (fd >= 0) {
		write(fd, text, sizeof(text)); /* longer than an ELF header, not one */
		close(fd);
	}
	fd = open("/tmp/short.so", O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (fd >= 0) {
		write(fd, "\177ELF", 4); /* shorter than an ELF header */
		close(fd);
	}
	fd = open("/tmp/noexec.so", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
	if (copy_with_interp("/tmp/dyn-missing", "/tmp/missing/ld.so") ||
	    copy_with_interp("/tmp/dyn-notelf", "/tmp/notelf.so") ||
	    copy_with_interp("/tmp/dyn-short", "/tmp/short.so") ||
	    copy_with_interp("/tmp/dyn-noexec", "/tmp/noexec.so")) {
		tap_fail("copies of this program with other PT_INTERPs", "errno %d", errno);
		return;
	}
	int e = exec_errno("/tmp/dyn-missing");

	CHECK(e == ENOENT, "execve with a missing interpreter -> ENOENT", "errno %d", e);
	e = exec_errno("/tmp/dyn-notelf");
	CHECK(e == ELIBBAD, "execve with an interpreter that is not ELF -> ELIBBAD", "errno %d", e);
	e = exec_errno("/tmp/dyn-short");
	CHECK(e == EIO, "execve with an interpreter shorter than an ELF header -> EIO", "errno %d", e);
	e = exec_errno("/tmp/dyn-noexec");
	CHECK(e == EACCES, "execve with an interpreter without exec permission -> EACCES", "errno %d",
	      e);
	unlink("/tmp/dyn-missing");
	unlink("/tmp/dyn-notelf");
	unlink("/tmp/dyn-noexec");
	unlink("/tmp/dyn-short");
	unlink("/tmp/short.so");
	unlink("/tmp/notelf.so");
	unlink("/tmp/noexec.so");
}

static void *thread_main(void *arg)
{
	return (void *)((uintptr_t)arg * 2);
}

int main(void)
{
	tap_init("t_dynamic", 30);
	unsigned long base = getauxval(AT_BASE), entry = getauxval(AT_ENTRY);

	CHECK(base != 0, "AT_BASE: the interpreter's load address", "0");
	CHECK(entry == (unsigned long)(uintptr_t)_start, "AT_ENTRY: this program's _start",
	      "%#lx vs %p", entry, (void *)_start);
	dl_iterate_phdr(each_object, NULL);
	CHECK(seen_ld && seen_libc, "the link map has ld-linux-aarch64.so.1 and libc.so.6",
	      "ld %d libc %d", seen_ld, seen_libc);
	CHECK(ld_base == base, "ld.so's link map address is AT_BASE", "%#lx vs %#lx",
	      (unsigned long)ld_base, base);
	FILE *m = fopen("/proc/self/maps", "r");
	char line[512];
	int maps_ld = 0, maps_libc = 0;

	while (m && fgets(line, sizeof(line), m)) {
		maps_ld |= strstr(line, "/ld-linux-aarch64.so.1") != NULL;
		maps_libc |= strstr(line, "/libc.so.6") != NULL;
	}
	if (m)
		fclose(m);
	CHECK(maps_ld && maps_libc, "/proc/self/maps shows both shared objects", "ld %d libc %d",
	      maps_ld, maps_libc);
	char *p = malloc(1 << 20);

	CHECK(p != NULL, "malloc of 1 MiB", "NULL");
	if (p) {
		memset(p, 0x5a, 1 << 20);
		free(p);
	}
	pthread_t t;
	void *ret = NULL;

	CHECK(pthread_create(&t, NULL, thread_main, (void *)21) == 0 && pthread_join(t, &ret) == 0 &&
		      (uintptr_t)ret == 42,
	      "a thread runs and joins", "ret %p", ret);
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);

	CHECK(h != NULL && dlsym(h, "printf") == (void *)printf, "dlopen(libc.so.6) finds printf",
	      "%s", h ? "wrong symbol" : dlerror());
	bad_interpreters();
	return tap_done();
}
