/* Tests for lib/base/heap.c, the intrusive min-heap that keeps the call
 * deadlines: after every insert and remove the tree's links agree with each
 * other, it is complete, every parent is at most its children, and the
 * least element is at the root, checked against a plain array of the
 * elements that should be in it. */
#include <check.h>
#include <stdlib.h>

#include "base.h"
#include "testutil.h"

typedef struct item {
  mcp__heap_node node; /* first: an item's address is its node's */
  unsigned key;
  bool in;
} item;

static bool item_less(const mcp__heap_node *a, const mcp__heap_node *b) {
  return ((const item *)a)->key < ((const item *)b)->key;
}

/* Checks the subtree at n, which should sit at 1-based position k under
 * parent; returns how many nodes it holds, and clears *ok at the first
 * link, position or order that is wrong. Plain tests, not assertions: the
 * random rounds below check thousands of nodes, and one assertion each
 * would cost more than the heap itself (check reports every assertion's
 * place to its parent process). */
static size_t check_subtree(const mcp__heap *h, const mcp__heap_node *n,
                            const mcp__heap_node *parent, size_t k, bool *ok) {
  if (n == NULL || !*ok)
    return 0;
  if (n->parent != parent || k > h->n /* complete: none past n */ ||
      !((const item *)n)->in || (parent && item_less(n, parent))) {
    *ok = false;
    return 0;
  }
  return 1 + check_subtree(h, n->left, n, 2 * k, ok) +
         check_subtree(h, n->right, n, 2 * k + 1, ok);
}

static void check_heap(const mcp__heap *h, const item *items, size_t count) {
  size_t in = 0;
  unsigned least = UINT32_MAX;
  for (size_t i = 0; i < count; i++) {
    if (items[i].in) {
      in++;
      least = items[i].key < least ? items[i].key : least;
    }
  }
  bool ok = true;
  size_t seen = check_subtree(h, h->min, NULL, 1, &ok);
  ck_assert_msg(ok, "a link, position or order of the tree is wrong");
  ck_assert_uint_eq(h->n, in);
  ck_assert_uint_eq(seen, in);
  if (in == 0)
    ck_assert_ptr_null(h->min);
  else
    ck_assert_uint_eq(((const item *)h->min)->key, least);
}

START_TEST(empty_heap_and_one_element) {
  mcp__heap h = {.less = item_less};
  item a = {.key = 5};
  check_heap(&h, &a, 1);
  mcp__heap_insert(&h, &a.node);
  a.in = true;
  check_heap(&h, &a, 1);
  mcp__heap_remove(&h, &a.node);
  a.in = false;
  check_heap(&h, &a, 1);
}
END_TEST

/* Removing the least element repeatedly yields the keys in order, equal
 * keys included. */
START_TEST(drains_in_order) {
  enum { N = 200 };
  static item items[N];
  mcp__heap h = {.less = item_less};
  srand(7);
  for (size_t i = 0; i < N; i++) {
    items[i] = (item){.key = (unsigned)rand() % 50};
    mcp__heap_insert(&h, &items[i].node);
    items[i].in = true;
  }
  check_heap(&h, items, N);
  unsigned prev = 0;
  for (size_t i = 0; i < N; i++) {
    item *least = (item *)h.min;
    ck_assert_uint_ge(least->key, prev);
    prev = least->key;
    mcp__heap_remove(&h, &least->node);
    least->in = false;
    check_heap(&h, items, N);
  }
  ck_assert_ptr_null(h.min);
}
END_TEST

/* Any element can leave, wherever it sits: the root, a leaf, the last
 * node, a node whose replacement must move up, or down. */
START_TEST(removes_anywhere) {
  enum { N = 64, ROUNDS = 4000 };
  static item items[N];
  mcp__heap h = {.less = item_less};
  srand(11);
  for (size_t i = 0; i < N; i++)
    items[i] = (item){.key = (unsigned)i};
  for (int r = 0; r < ROUNDS; r++) {
    item *it = &items[(size_t)rand() % N];
    if (it->in) {
      mcp__heap_remove(&h, &it->node);
      it->in = false;
    } else {
      it->key = (unsigned)rand() % 1000;
      mcp__heap_insert(&h, &it->node);
      it->in = true;
    }
    check_heap(&h, items, N);
  }
}
END_TEST

/* Sorted and reverse-sorted input: every insert moves to the root, or
 * none does. */
START_TEST(sorted_and_reversed_input) {
  enum { N = 100 };
  static item items[N];
  for (int reversed = 0; reversed < 2; reversed++) {
    mcp__heap h = {.less = item_less};
    for (size_t i = 0; i < N; i++) {
      items[i] = (item){.key = reversed ? (unsigned)(N - i) : (unsigned)i};
      mcp__heap_insert(&h, &items[i].node);
      items[i].in = true;
      check_heap(&h, items, i + 1);
    }
    for (size_t i = 0; i < N; i += 2) {
      mcp__heap_remove(&h, &items[i].node);
      items[i].in = false;
      check_heap(&h, items, N);
    }
  }
}
END_TEST

static Suite *heap_suite(void) {
  Suite *s = suite_create("heap");
  TCase *t = tcase_create("heap");
  tcase_add_test(t, empty_heap_and_one_element);
  tcase_add_test(t, drains_in_order);
  tcase_add_test(t, removes_anywhere);
  tcase_add_test(t, sorted_and_reversed_input);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tu_run(heap_suite()); }
