/* list.h - intrusive doubly linked circular lists (the head is a sentinel node). */
#pragma once

#include <stdbool.h>
#include <kern/compiler.h>

struct list_node {
	struct list_node *next, *prev;
};

#define LIST_INIT(name) { &(name), &(name) }

static inline void list_init(struct list_node *head)
{
	head->next = head->prev = head;
}

static inline bool list_empty(const struct list_node *head)
{
	return head->next == head;
}

static inline void list_insert_between(struct list_node *n, struct list_node *prev,
				       struct list_node *next)
{
	n->prev = prev;
	n->next = next;
	prev->next = n;
	next->prev = n;
}

static inline void list_add_tail(struct list_node *head, struct list_node *n)
{
	list_insert_between(n, head->prev, head);
}

static inline void list_add_head(struct list_node *head, struct list_node *n)
{
	list_insert_between(n, head, head->next);
}

/* Take n off its list and link it to itself: list_empty(n) is then true and n can be added
 * again or taken off again. */
static inline void list_del_init(struct list_node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = n;
}

/*
 * Take n off its list for good.  The debug build (KDEBUG) poisons its links, so a walk that
 * reaches a removed node, or a second list_del of it, faults at a recognisable address
 * (0xdead...) instead of silently using stale links; a node that is tested or removed again
 * afterwards is list_del_init's.
 */
#define LIST_POISON_NEXT ((struct list_node *)0xdead000000000100ull)
#define LIST_POISON_PREV ((struct list_node *)0xdead000000000200ull)
static inline void list_del(struct list_node *n)
{
	list_del_init(n);
#if defined(KDEBUG) && KDEBUG
	n->next = LIST_POISON_NEXT;
	n->prev = LIST_POISON_PREV;
#endif
}

static inline struct list_node *list_pop_head(struct list_node *head)
{
	struct list_node *n = head->next;

	if (n == head)
		return NULL;
	list_del_init(n);
	return n;
}

#define list_entry(node, type, member) container_of(node, type, member)
#define list_for_each(pos, head) for ((pos) = (head)->next; (pos) != (head); (pos) = (pos)->next)
#define list_for_each_safe(pos, tmp, head)                                                         \
	for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head);                           \
	     (pos) = (tmp), (tmp) = (pos)->next)
