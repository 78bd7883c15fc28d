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

static inline void list_del(struct list_node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = n;
}

static inline struct list_node *list_pop_head(struct list_node *head)
{
	struct list_node *n = head->next;

	if (n == head)
		return NULL;
	list_del(n);
	return n;
}

#define list_entry(node, type, member) container_of(node, type, member)
#define list_for_each(pos, head) for ((pos) = (head)->next; (pos) != (head); (pos) = (pos)->next)
#define list_for_each_safe(pos, tmp, head)                                                         \
	for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head);                           \
	     (pos) = (tmp), (tmp) = (pos)->next)
