/*
 * dev.c - the character devices under /dev: console (5:1) and tty (5:0) on the PL011 UART,
 * null (1:3), zero (1:5), full (1:7), random (1:8), urandom (1:9), kmsg (1:11, kernel/klog.c).
 *
 * What it does: a minimal tty line discipline for the console: input is polled from
 * console_getc (the UART has no receive interrupt here), so blocking reads and poll re-check
 * every 10 ms; ICRNL, canonical mode with erase and EOF (^D), and echo follow the termios
 * flags that TCSETS set; output goes to console_write (which adds the CR of ONLCR).
 * The ioctls are the few libc and busybox use: TCGETS, TCSETS/W/F, TIOCGWINSZ/TIOCSWINSZ
 * (24x80), TIOCGPGRP/TIOCSPGRP, TIOCGSID, TIOCSCTTY/TIOCNOTTY, FIONREAD.
 * /dev/zero mmap: a private mapping becomes anonymous memory, a shared one maps an
 * unlinked ramfs file of the mapping's size (shared anonymous memory, as Linux's shmem).
 *
 * What it does not do: job-control signals (ISIG ^C does not send SIGINT), flow control,
 * baud rates, VMIN/VTIME.
 *
 * ABI: struct termios and struct winsize from <asm/termios.h>; Linux's default termios for
 * a console (tty_std_termios: ICRNL|IXON, OPOST|ONLCR, B38400|CS8|CREAD|HUPCL,
 * ISIG|ICANON|ECHO|ECHOE|ECHOK|ECHOCTL|ECHOKE|IEXTEN, INIT_C_CC).
 */
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/printk.h>
#include <kern/proc.h>
#include <kern/signal.h>
#include <kern/signal_proc.h>
#include <kern/string.h>
#include <kern/vm.h>
#include <asm-generic/poll.h>
#include <asm/termios.h>
#include <linux/fcntl.h>
#include <linux/stat.h>
#include "fs_internal.h"

#define CON_POLL_NS 10000000ull /* 10 ms */
#define CON_BUF 4096

static struct spinlock con_lock = SPINLOCK_INIT;
static char con_buf[CON_BUF]; /* (con_lock) typed input */
static size_t con_len; /* (con_lock) bytes in con_buf */
static size_t con_ready; /* (con_lock) bytes a read may take (whole lines when ICANON) */
static bool con_eof; /* (con_lock) ^D at the start of a line: the next read returns 0 */
static struct termios con_tio = {
	.c_iflag = ICRNL | IXON,
	.c_oflag = OPOST | ONLCR,
	.c_cflag = B38400 | CS8 | CREAD | HUPCL,
	.c_lflag = ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN,
	.c_cc = "\003\034\177\025\004\0\1\0\021\023\032\0\022\017\027\026\0",
};
static struct winsize con_ws = { .ws_row = 24, .ws_col = 80 };
static int con_pgrp; /* 0: the caller's own process group */

static void con_echo(char c)
{
	if (!(con_tio.c_lflag & ECHO))
		return;
	if (c == '\b') {
		console_write("\b \b", 3);
		return;
	}
	console_write(&c, 1);
}

/* Move what the UART has into the line buffer, applying the input flags. */
static void con_pump_locked(void)
{
	spin_assert_held(&con_lock);
	int ch;

	while ((ch = console_getc()) >= 0) {
		char c = (char)ch;

		if (c == '\r' && (con_tio.c_iflag & IGNCR))
			continue;
		if (c == '\r' && (con_tio.c_iflag & ICRNL))
			c = '\n';
		if (!(con_tio.c_lflag & ICANON)) {
			if (con_len < CON_BUF) {
				con_buf[con_len++] = c;
				con_echo(c);
			}
			con_ready = con_len;
			continue;
		}
		if (c == (char)con_tio.c_cc[VERASE] || c == '\b') {
			if (con_len > con_ready) {
				con_len--;
				con_echo('\b');
			}
			continue;
		}
		if (c == (char)con_tio.c_cc[VEOF]) {
			if (con_len == con_ready)
				con_eof = true;
			con_ready = con_len;
			continue;
		}
		if (con_len >= CON_BUF - 1 && c != '\n')
			continue; /* keep room for the newline */
		con_buf[con_len++] = c;
		con_echo(c);
		if (c == '\n')
			con_ready = con_len;
	}
}

static long con_read(struct file *f, void *ubuf, size_t n, uint64_t *pos)
{
	char *kbuf;
	size_t k;
	long r;

	if (n == 0)
		return 0;
	kbuf = kmalloc(MIN(n, (size_t)CON_BUF));
	if (!kbuf)
		return -ENOMEM;
	for (;;) {
		unsigned long fl = spin_lock_irqsave(&con_lock);

		con_pump_locked();
		if (con_ready || con_eof) {
			k = MIN(MIN(n, (size_t)CON_BUF), con_ready);
			memcpy(kbuf, con_buf, k);
			memmove(con_buf, con_buf + k, con_len - k);
			con_len -= k;
			con_ready -= k;
			if (!k)
				con_eof = false;
			spin_unlock_irqrestore(&con_lock, fl);
			break;
		}
		spin_unlock_irqrestore(&con_lock, fl);
		if (atomic_load(&f->flags) & O_NONBLOCK) {
			kfree(kbuf);
			return -EAGAIN;
		}
		if (signal_pending(current_task())) {
			kfree(kbuf);
			return -ERESTARTSYS; /* kern/signal_proc.h: EINTR unless SA_RESTART */
		}
		sleep_ns(CON_POLL_NS);
	}
	r = k && ksvc_copy_to_user(ubuf, kbuf, k) ? -EFAULT : (long)k;
	kfree(kbuf);
	return r;
}

static long con_write(struct file *f, const void *ubuf, size_t n, uint64_t *pos)
{
	char kbuf[256];
	size_t done = 0;

	while (done < n) {
		size_t c = MIN(n - done, sizeof(kbuf));

		if (ksvc_copy_from_user(kbuf, (const char *)ubuf + done, c))
			return done ? (long)done : -EFAULT;
		console_write(kbuf, c);
		done += c;
	}
	return (long)done;
}

static unsigned int con_poll(struct file *f, struct ksvc_poll *pt)
{
	unsigned int mask = POLLOUT | POLLWRNORM;
	unsigned long fl = spin_lock_irqsave(&con_lock);

	con_pump_locked();
	if (con_ready || con_eof)
		mask |= POLLIN | POLLRDNORM;
	spin_unlock_irqrestore(&con_lock, fl);
	poll_set_interval(pt, CON_POLL_NS);
	return mask;
}

static long con_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	void *uarg = (void *)arg;
	struct proc *p = current_task()->proc;
	struct termios t;
	unsigned long fl;
	int v;

	switch (cmd) {
	case TCGETS:
		t = con_tio;
		return ksvc_copy_to_user(uarg, &t, sizeof(t));
	case TCSETS:
	case TCSETSW:
	case TCSETSF:
		if (ksvc_copy_from_user(&t, uarg, sizeof(t)))
			return -EFAULT;
		fl = spin_lock_irqsave(&con_lock);
		con_tio = t;
		if (cmd == TCSETSF)
			con_len = con_ready = 0;
		if (!(t.c_lflag & ICANON))
			con_ready = con_len;
		spin_unlock_irqrestore(&con_lock, fl);
		return 0;
	case TIOCGWINSZ:
		return ksvc_copy_to_user(uarg, &con_ws, sizeof(con_ws));
	case TIOCSWINSZ:
		return ksvc_copy_from_user(&con_ws, uarg, sizeof(con_ws));
	case TIOCGPGRP:
		v = con_pgrp ? con_pgrp : (p ? p->pgid : 0);
		return ksvc_copy_to_user(uarg, &v, sizeof(v));
	case TIOCSPGRP:
		if (ksvc_copy_from_user(&v, uarg, sizeof(v)))
			return -EFAULT;
		if (v < 0)
			return -EINVAL;
		con_pgrp = v;
		return 0;
	case TIOCGSID:
		v = p ? p->sid : 0;
		return ksvc_copy_to_user(uarg, &v, sizeof(v));
	case TIOCSCTTY:
	case TIOCNOTTY:
	case TCFLSH:
	case TCXONC:
	case TCSBRK:
		return 0;
	case FIONREAD:
		fl = spin_lock_irqsave(&con_lock);
		con_pump_locked();
		v = (int)con_ready;
		spin_unlock_irqrestore(&con_lock, fl);
		return ksvc_copy_to_user(uarg, &v, sizeof(v));
	default:
		return -ENOTTY;
	}
}

const struct file_ops console_fops = {
	.read = con_read,
	.write = con_write,
	.ioctl = con_ioctl,
	.poll = con_poll,
};

/* ---- null, zero, full, random ---- */

static long null_read(struct file *f, void *ubuf, size_t n, uint64_t *pos)
{
	return 0;
}

static long null_write(struct file *f, const void *ubuf, size_t n, uint64_t *pos)
{
	return (long)n; /* the buffer is never read, as Linux */
}

static int64_t null_llseek(struct file *f, int64_t off, int whence)
{
	f->pos = 0;
	return 0;
}

/* Fill a user buffer page by page from gen (NULL: zeros); a fault gives a short count. */
static long fill_user(void *ubuf, size_t n, bool random)
{
	static const char zeros[512];
	uint32_t rnd[128];
	size_t done = 0;

	while (done < n) {
		size_t c = MIN(n - done, sizeof(zeros));
		size_t pg = KSVC_PAGE_SIZE - ((uintptr_t)ubuf + done) % KSVC_PAGE_SIZE;

		c = MIN(c, pg);
		if (random)
			for (size_t i = 0; i < ARRAY_SIZE(rnd); i++)
				rnd[i] = ksvc_random_u32();
		if (ksvc_copy_to_user((char *)ubuf + done, random ? (const void *)rnd : zeros, c))
			return done ? (long)done : -EFAULT;
		done += c;
		if (signal_pending(current_task()) && done < n)
			break;
	}
	return (long)done;
}

static long zero_read(struct file *f, void *ubuf, size_t n, uint64_t *pos)
{
	return fill_user(ubuf, n, false);
}

static long random_read(struct file *f, void *ubuf, size_t n, uint64_t *pos)
{
	return fill_user(ubuf, n, true);
}

static long full_write(struct file *f, const void *ubuf, size_t n, uint64_t *pos)
{
	return -ENOSPC;
}

struct file *shm_file_new(uint64_t size)
{
	struct inode *ino = ramfs_inode_new(S_IFREG | 0600);
	struct file *shm;

	if (!ino)
		return NULL;
	shm = file_alloc(&ramfs_file_ops, ino, O_RDWR, NULL);
	inode_put(ino);
	if (!shm)
		return NULL;
	fs_mutex_lock(&vfs_lock);
	ino->size = size;
	fs_mutex_unlock(&vfs_lock);
	return shm;
}

static int zero_mmap(struct file *f, struct vm_area *vma)
{
	struct file *shm;

	vma->flags &= ~(uint32_t)VMA_BUS_PAST_EOF;
	vma->file_end = 0;
	if (!(vma->flags & VMA_SHARED)) {
		file_put(vma->file); /* private: plain anonymous memory */
		vma->file = NULL;
		vma->pgoff = 0;
		return 1;
	}
	shm = shm_file_new(vma->end - vma->start);
	if (!shm)
		return -ENOMEM;
	file_put(vma->file);
	vma->file = shm;
	vma->pgoff = 0;
	return 1;
}

static const struct file_ops null_fops = {
	.read = null_read,
	.write = null_write,
	.llseek = null_llseek,
};
static const struct file_ops zero_fops = {
	.read = zero_read,
	.write = null_write,
	.llseek = null_llseek,
	.mmap = zero_mmap,
};
static const struct file_ops full_fops = {
	.read = zero_read,
	.write = full_write,
	.llseek = null_llseek,
};
static const struct file_ops random_fops = {
	.read = random_read,
	.write = null_write,
	.llseek = null_llseek,
};

static struct inode *console_inode;

static void dev_node(struct inode *dir, const char *name, uint32_t perm, uint32_t major,
		     uint32_t minor, const struct file_ops *fops, struct inode **keep)
{
	struct inode *ino = ramfs_inode_new(S_IFCHR | perm);

	if (!ino)
		return;
	ino->rdev = major << 8 | minor; /* new_encode_dev for small numbers: makedev() */
	ino->fops = fops;
	ramfs_link_locked(dir, name, strlen(name), ino);
	if (keep)
		*keep = ino; /* keeps the creation reference */
	else
		inode_put_locked(ino);
}

void dev_init(struct inode *devdir)
{
	fs_mutex_lock(&vfs_lock);
	dev_node(devdir, "console", 0600, 5, 1, &console_fops, &console_inode);
	dev_node(devdir, "tty", 0666, 5, 0, &console_fops, NULL);
	dev_node(devdir, "null", 0666, 1, 3, &null_fops, NULL);
	dev_node(devdir, "zero", 0666, 1, 5, &zero_fops, NULL);
	dev_node(devdir, "full", 0666, 1, 7, &full_fops, NULL);
	dev_node(devdir, "random", 0666, 1, 8, &random_fops, NULL);
	dev_node(devdir, "urandom", 0666, 1, 9, &random_fops, NULL);
	dev_node(devdir, "kmsg", 0644, 1, 11, &klog_kmsg_fops, NULL);
	fs_mutex_unlock(&vfs_lock);
}

struct file *dev_console_open(void)
{
	if (!console_inode)
		return NULL;
	return file_alloc(&console_fops, console_inode, O_RDWR | O_LARGEFILE, NULL);
}

const struct file_ops *dev_fops_for(uint32_t rdev)
{
	switch (rdev) {
	case 5 << 8 | 0:
	case 5 << 8 | 1:
		return &console_fops;
	case 1 << 8 | 3:
		return &null_fops;
	case 1 << 8 | 5:
		return &zero_fops;
	case 1 << 8 | 7:
		return &full_fops;
	case 1 << 8 | 8:
	case 1 << 8 | 9:
		return &random_fops;
	case 1 << 8 | 11:
		return &klog_kmsg_fops;
	default:
		return NULL;
	}
}

/* sendfile's output to a device: bytes written, or -EINVAL for a device it cannot take. */
long dev_write_kernel(struct file *f, const void *kbuf, size_t n)
{
	if (f->ops == &console_fops) {
		console_write(kbuf, n);
		return (long)n;
	}
	if (f->ops == &null_fops || f->ops == &zero_fops || f->ops == &random_fops)
		return (long)n;
	if (f->ops == &full_fops)
		return -ENOSPC;
	return -EINVAL;
}
