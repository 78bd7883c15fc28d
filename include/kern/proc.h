/*
 * proc.h - user processes: what a task running user code owns beyond its kernel thread
 * (address space, files, signal state).  Threads of one process share one struct proc.
 */
#pragma once

#include <stdint.h>
#include <kern/sched.h>

struct proc {
	int tgid;
};

static inline int proc_tgid(const struct task *t)
{
	const struct proc *p = t->proc;

	return p ? p->tgid : t->tid;
}
