/* vma.h - a find_vma callback for the CO-RE test programs (task.bpf.c, otask.bpf.c): it counts
 * its calls and keeps the area's bounds, read through perfkernel's struct vm_area
 * (kernel/include/kern/vm.h) or Linux's struct vm_area_struct, whichever the kernel has. */
#ifndef TESTS_USER_BPF_VMA_H
#define TESTS_USER_BPF_VMA_H

struct vm_area___pk {
	__u64 start, end;
} __attribute__((preserve_access_index));
struct vm_area_struct___lx {
	unsigned long vm_start, vm_end;
} __attribute__((preserve_access_index));

/* what the find_vma callback saw */
struct vma_seen {
	__u64 calls, start, end;
};

static long vma_cb(void *task, void *vma, struct vma_seen *c)
{
	c->calls++;
	if (bpf_core_type_exists(struct vm_area___pk)) {
		c->start = ((struct vm_area___pk *)vma)->start;
		c->end = ((struct vm_area___pk *)vma)->end;
	} else {
		c->start = ((struct vm_area_struct___lx *)vma)->vm_start;
		c->end = ((struct vm_area_struct___lx *)vma)->vm_end;
	}
	return 0;
}

#endif
