/*
 * task.h - the thread hook kernel/ calls into bpf/ (no uapi headers, so that the scheduler can
 * include it).
 */
#pragma once

struct ksvc_task;

/*
 * [any] A thread's struct is about to be freed (it can no longer be found by tid): its
 * BPF_MAP_TYPE_TASK_STORAGE values go.  kernel/ calls it once per thread.
 */
void bpf_task_free(struct ksvc_task *t);
