/* The intrusive min-heap of base.h. Nodes move by relinking, never by
 * copying the elements, so an element's address stays its own. */
#include "base.h"

/* The link that holds the node at 1-based position k (k <= h->n + 1), and
 * in *parent the node that link belongs to (NULL for the root). */
static mcp__heap_node **link_at(mcp__heap *h, size_t k,
                                mcp__heap_node **parent) {
  /* The bits of k below its top one, lowest first: the path from the
   * root. */
  size_t path = 0;
  unsigned steps = 0;
  for (; k >= 2; k >>= 1, steps++)
    path = (path << 1) | (k & 1);
  mcp__heap_node **at = &h->min;
  *parent = NULL;
  for (; steps > 0; steps--, path >>= 1) {
    *parent = *at;
    at = path & 1 ? &(*at)->right : &(*at)->left;
  }
  return at;
}

/* Points whatever held old (its parent's link, or the root) at new. */
static void relink_parent(mcp__heap *h, mcp__heap_node *parent,
                          const mcp__heap_node *old, mcp__heap_node *new_) {
  if (parent == NULL)
    h->min = new_;
  else if (parent->left == old)
    parent->left = new_;
  else
    parent->right = new_;
}

/* Swaps child c with its parent p in the tree. */
static void swap_with_parent(mcp__heap *h, mcp__heap_node *c) {
  mcp__heap_node *p = c->parent, *cl = c->left, *cr = c->right;
  mcp__heap_node *sibling = p->left == c ? p->right : p->left;
  bool was_left = p->left == c;
  c->parent = p->parent;
  relink_parent(h, c->parent, p, c);
  c->left = was_left ? p : sibling;
  c->right = was_left ? sibling : p;
  if (sibling)
    sibling->parent = c;
  p->parent = c;
  p->left = cl;
  p->right = cr;
  if (cl)
    cl->parent = p;
  if (cr)
    cr->parent = p;
}

static void sift_up(mcp__heap *h, mcp__heap_node *n) {
  while (n->parent && h->less(n, n->parent))
    swap_with_parent(h, n);
}

static void sift_down(mcp__heap *h, mcp__heap_node *n) {
  for (;;) {
    mcp__heap_node *least = n;
    if (n->left && h->less(n->left, least))
      least = n->left;
    if (n->right && h->less(n->right, least))
      least = n->right;
    if (least == n)
      return;
    swap_with_parent(h, least);
  }
}

void mcp__heap_insert(mcp__heap *h, mcp__heap_node *node) {
  mcp__heap_node *parent;
  mcp__heap_node **at = link_at(h, h->n + 1, &parent);
  node->left = node->right = NULL;
  node->parent = parent;
  *at = node;
  h->n++;
  sift_up(h, node);
}

void mcp__heap_remove(mcp__heap *h, mcp__heap_node *node) {
  /* The last node leaves its place and, unless it is the one removed,
   * takes node's, from where it moves up or down to where it belongs. */
  mcp__heap_node *parent;
  mcp__heap_node **at = link_at(h, h->n, &parent);
  mcp__heap_node *last = *at;
  *at = NULL;
  h->n--;
  if (last == node)
    return;
  last->left = node->left;
  last->right = node->right;
  last->parent = node->parent;
  if (last->left)
    last->left->parent = last;
  if (last->right)
    last->right->parent = last;
  relink_parent(h, node->parent, node, last);
  sift_down(h, last);
  sift_up(h, last);
}
