/* The Redis store: mcp/store.h's interface over hiredis's synchronous API,
 * on one thread of the store's own that owns the connection and serves a
 * queue. A caller only queues (mcp_store_rate_take returns at once); the
 * thread answers through the caller's callback. Synchronous hiredis on a
 * thread of its own rather than its asynchronous API, which needs an event
 * loop adapter: one connection serves one request at a time, each bounded
 * by the command timeout, and the code stays a plain loop; the takes queued
 * meanwhile go out together (pipelined) and their answers are read in
 * order, one round trip for all. While the
 * connection is down the thread answers every request at once with an
 * error and reconnects with a growing pause. Records' puts, gets and lists
 * are requests of that queue too (one Lua script each), and so are the
 * nodes' leases, which the thread sets again every third of their length
 * and drops when the store is freed. */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "redis_int.h"

#define TIMEOUT_MS 2000
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
/* A connection unused this long may have been closed meanwhile (Redis's
 * timeout, a tunnel's or a proxy's idle limit): a round it fails before
 * any reply is sent again, once, on a new connection. */
#define IDLE_US 1000000ull
/* The most takes sent to Redis at once, before their answers are read. */
#define BATCH 64
/* The threads that deliver answers (see "the answers" below). */
#define ANSWER_THREADS 2

/* The token bucket, atomic in Redis: KEYS[1] the bucket (a hash of tokens
 * and ts, Redis's clock in milliseconds), ARGV calls, per seconds and how
 * many tokens to take at most (1; more for a lease). Returns {taken,
 * wait_ms}: taken as many whole tokens as the bucket holds, up to the most,
 * or 0 and the wait until one is back. The hash expires once a full bucket
 * would be back. */
static const char SCRIPT[] =
    "if redis.replicate_commands then redis.replicate_commands() end\n"
    "local calls = tonumber(ARGV[1])\n"
    "local per_ms = tonumber(ARGV[2]) * 1000\n"
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "local b = redis.call('HMGET', KEYS[1], 'tokens', 'ts')\n"
    "local tokens = tonumber(b[1])\n"
    "local ts = tonumber(b[2])\n"
    "if tokens == nil or ts == nil then tokens = calls; ts = now end\n"
    "if now > ts then tokens = tokens + (now - ts) * calls / per_ms end\n"
    "if tokens > calls then tokens = calls end\n"
    "local want = tonumber(ARGV[3]) or 1\n"
    "local allowed, wait = 0, 0\n"
    "if tokens >= 1 then\n"
    "  allowed = math.min(math.floor(tokens), want)\n"
    "  tokens = tokens - allowed\n"
    "else\n"
    "  wait = math.ceil((1 - tokens) * per_ms / calls)\n"
    "  if wait < 1 then wait = 1 end\n"
    "end\n"
    "redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens),\n"
    "           'ts', string.format('%d', now))\n"
    "redis.call('PEXPIRE', KEYS[1], per_ms + 1000)\n"
    "return {allowed, wait}\n";

#define KEY_PREFIX "mcp:rate:"

/* ---- the records' keys and scripts -----------------------------------------
 * A record is the hash REC_PREFIX<key> {v: its value, h: its holder (absent:
 * nobody's), f: "1" when final, o: its order in decimal, i: its index
 * (absent: none)}, expiring with its ttl. An index is the sorted set
 * IDX_PREFIX<index> of its records' keys, scored by their order (exact
 * below 2^53, a double's), expiring no sooner than its newest record. A
 * node joined is the string NODE_PREFIX<name>, expiring with its lease. A
 * record evicted leaves the string GONE_PREFIX<key> for the rest of its
 * ttl: its key's puts are refused (mcp_store_put). */
#define REC_PREFIX "mcp:rec:"
#define IDX_PREFIX "mcp:idx:"
#define NODE_PREFIX "mcp:node:"
#define GONE_PREFIX "mcp:gone:"
/* The longest ttl passed on (ms, about 35000 years): PEXPIRE refuses one
 * that overflows its clock. */
#define TTL_MAX (1ull << 50)

/* rec(r, key): the record of the hash r (key its name) as the scripts
 * answer it, {key, value, has holder, holder, final, order, has index,
 * index, holder alive}, or nil when there is none. after(a, b): whether
 * a sorts after b byte by byte, as a sorted set orders its members (Lua's
 * own comparison follows the server's locale). */
#define LUA_COMMON                                                             \
  "local function rec(r, key)\n"                                               \
  "  local h = redis.call('HMGET', r, 'v', 'h', 'f', 'o', 'i')\n"              \
  "  if not h[1] then return nil end\n"                                        \
  "  local alive = 1\n"                                                        \
  "  if h[2] then alive = redis.call('EXISTS', '" NODE_PREFIX                  \
  "' .. h[2]) end\n"                                                           \
  "  return {key, h[1], h[2] and 1 or 0, h[2] or '', tonumber(h[3]) or 0,\n"   \
  "          h[4] or '0', h[5] and 1 or 0, h[5] or '', alive}\n"               \
  "end\n"

/* A budget (mcp_store_count) is four keys, BUD_PREFIX<kind>:<name>: t, a
 * hash {r: its records, b: their bytes}; m, a hash of its records' keys
 * and the bytes each counts; x, a sorted set of their keys scored by when
 * they expire (Redis's clock, ms); o, the keys of its final records (the
 * only ones evicted) scored by their order (so ranked by order, then key,
 * as evictions go: a full budget of running records is refused without
 * reading them; a member a version before this one left there that is
 * not final is passed over). The four expire together, a second after
 * the last record in them would; a budget emptied is deleted. A counted
 * record's hash also has c: how many budgets it counts in, and c1 to c4:
 * their names. Bytes and limits are a double's, exact below 2^53 (what
 * the C side sends is cut there). */
#define BUD_PREFIX "mcp:bud:"

/* A put: KEYS[1] the record; ARGV key, has value, value, has holder,
 * holder, final, order, has index, index, ttl, counted, bytes, nbudgets,
 * then name, max records, max bytes of each budget. Returns {1, {evicted
 * record...}} when written (each {key, has holder, holder, order, holder
 * alive}), {0, the final record stored}, {2, why} when a budget refused
 * it, or {3} when the record was evicted (these two change nothing). */
static const char PUT_SCRIPT_A[] = LUA_COMMON
    "if redis.replicate_commands then redis.replicate_commands() end\n"
    "local r, key = KEYS[1], ARGV[1]\n"
    "if redis.call('EXISTS', '" GONE_PREFIX "' .. key) == 1 then\n"
    "  return {3}\n"
    "end\n"
    "local old = redis.call('HMGET', r, 'f', 'i')\n"
    "if old[1] == '1' then return {0, rec(r, key)} end\n"
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "local function bk(kind, name) return '" BUD_PREFIX "' .. kind .. ':' .. "
    "name end\n"
    "local function num(n) return string.format('%.0f', n) end\n"
    "local function hget(h, f) return redis.call('HMGET', h, f)[1] end\n"
    /* k stops counting in the budget name, when it does. */
    "local function leave(name, k)\n"
    "  local m, tk = bk('m', name), bk('t', name)\n"
    "  local b = tonumber(hget(m, k))\n"
    "  if not b then return end\n"
    "  local tt = redis.call('HMGET', tk, 'r', 'b')\n"
    "  local n = (tonumber(tt[1]) or 1) - 1\n"
    "  if n <= 0 then\n"
    "    redis.call('DEL', tk, m, bk('x', name), bk('o', name))\n"
    "    return\n"
    "  end\n"
    "  redis.call('HDEL', m, k)\n"
    "  redis.call('ZREM', bk('x', name), k)\n"
    "  redis.call('ZREM', bk('o', name), k)\n"
    "  redis.call('HSET', tk, 'r', num(n), 'b', num((tonumber(tt[2]) or b) - "
    "b))\n"
    "end\n"
    /* k counts bytes in name (only when it does already: carry), expiring
     * at exp, at order, final or not. */
    "local function join(name, k, bytes, exp, order, carry, final)\n"
    "  local m, tk, x = bk('m', name), bk('t', name), bk('x', name)\n"
    "  local had = tonumber(hget(m, k))\n"
    "  if carry then bytes = had end\n"
    "  if not bytes then return end\n"
    "  local tt = redis.call('HMGET', tk, 'r', 'b')\n"
    "  local n = (tonumber(tt[1]) or 0) + (had and 0 or 1)\n"
    "  local b = (tonumber(tt[2]) or 0) + bytes - (had or 0)\n"
    "  redis.call('HSET', tk, 'r', num(n), 'b', num(b))\n"
    "  redis.call('HSET', m, k, num(bytes))\n"
    "  redis.call('ZADD', x, num(exp), k)\n"
    "  if final then redis.call('ZADD', bk('o', name), order, k)\n"
    "  else redis.call('ZREM', bk('o', name), k) end\n"
    "  local top = redis.call('ZRANGE', x, -1, -1, 'WITHSCORES')\n"
    "  local keep = num(tonumber(top[2]) - now + 1000)\n"
    "  for _, bkey in ipairs({tk, m, x, bk('o', name)}) do\n"
    "    redis.call('PEXPIRE', bkey, keep)\n"
    "  end\n"
    "end\n"
    /* The budgets the record of hash h (key k) counts in: it leaves them
     * all. */
    "local function uncount(h, k)\n"
    "  local c = redis.call('HMGET', h, 'c', 'c1', 'c2', 'c3', 'c4')\n"
    "  for i = 1, tonumber(c[1]) or 0 do\n"
    "    if c[1 + i] then leave(c[1 + i], k) end\n"
    "  end\n"
    "end\n"
    /* Drops the members of name whose time passed. */
    "local function prune(name)\n"
    "  local x = bk('x', name)\n"
    "  local n = redis.call('ZCOUNT', x, '-inf', num(now))\n"
    "  if n == 0 then return end\n"
    "  local gone = redis.call('ZRANGE', x, 0, n - 1)\n"
    "  for i = 1, #gone do leave(name, gone[i]) end\n"
    "end\n";
static const char PUT_SCRIPT_B[] =
    "local function limits(mr, mb)\n"
    "  if mr > 0 and mb > 0 then\n"
    "    return num(mr) .. ' records, ' .. num(mb) .. ' bytes'\n"
    "  end\n"
    "  if mr > 0 then return num(mr) .. ' records' end\n"
    "  return num(mb) .. ' bytes'\n"
    "end\n"
    /* Makes room in the budget name (limits mr, mb) for key counting
     * bytes: marks its oldest final records (mark) until it fits, or
     * returns why it cannot. */
    "local marked, evict = {}, {}\n"
    "local function room(name, mr, mb, bytes)\n"
    "  local m = bk('m', name)\n"
    "  local mine = tonumber(hget(m, key))\n"
    "  if mine and bytes <= mine then return nil end\n"
    "  local tt = redis.call('HMGET', bk('t', name), 'r', 'b')\n"
    "  local r0, b0 = tonumber(tt[1]) or 0, tonumber(tt[2]) or 0\n"
    "  local n, b = r0 - (mine and 1 or 0), b0 - (mine or 0)\n"
    "  local finals = 0\n"
    "  for k in pairs(marked) do\n"
    "    local kb = tonumber(hget(m, k))\n"
    "    if kb then n, b, finals = n - 1, b - kb, finals + 1 end\n"
    "  end\n"
    "  local function fits()\n"
    "    return (mr == 0 or n + 1 <= mr) and (mb == 0 or b + bytes <= mb)\n"
    "  end\n"
    "  local at = 0\n"
    "  while not fits() do\n"
    "    local ks = redis.call('ZRANGE', bk('o', name), at, at + 63)\n"
    "    if #ks == 0 then break end\n"
    "    at = at + #ks\n"
    "    for j = 1, #ks do\n"
    "      local k = ks[j]\n"
    "      if k ~= key and not marked[k] and\n"
    "         hget('" REC_PREFIX "' .. k, 'f') == '1' then\n"
    "        marked[k] = true\n"
    "        evict[#evict + 1] = k\n"
    "        n, b = n - 1, b - (tonumber(hget(m, k)) or 0)\n"
    "        finals = finals + 1\n"
    "        if fits() then break end\n"
    "      end\n"
    "    end\n"
    "  end\n"
    "  if fits() then return nil end\n"
    "  if mb > 0 and bytes > mb then\n"
    "    return 'the budget \"' .. name .. '\" holds at most ' .. num(mb) ..\n"
    "           ' bytes, and the record counts ' .. num(bytes)\n"
    "  end\n"
    "  return 'the budget \"' .. name .. '\" is full (' .. num(r0) ..\n"
    "         ' records, ' .. num(b0) .. ' bytes; at most ' ..\n"
    "         limits(mr, mb) .. '), and ' .. (finals > 0 and\n"
    "         'evicting its final records would not make room' or\n"
    "         'none of them is final')\n"
    "end\n";
static const char PUT_SCRIPT_C[] =
    "local counted = ARGV[11] == '1'\n"
    "local bytes, nb = tonumber(ARGV[12]), tonumber(ARGV[13])\n"
    "if counted then\n"
    "  for i = 1, nb do\n"
    "    local name = ARGV[11 + 3 * i]\n"
    "    prune(name)\n"
    "    local why = room(name, tonumber(ARGV[12 + 3 * i]),\n"
    "                     tonumber(ARGV[13 + 3 * i]), bytes)\n"
    "    if why then return {2, why} end\n"
    "  end\n"
    "end\n"
    "local out = {}\n"
    "for i = 1, #evict do\n"
    "  local k = evict[i]\n"
    "  local h = '" REC_PREFIX "' .. k\n"
    "  local e = redis.call('HMGET', h, 'h', 'o', 'i')\n"
    "  local left = redis.call('PTTL', h)\n"
    "  uncount(h, k)\n"
    "  if e[3] then redis.call('ZREM', '" IDX_PREFIX "' .. e[3], k) end\n"
    "  redis.call('DEL', h)\n"
    "  if left > 0 then\n"
    "    redis.call('SET', '" GONE_PREFIX "' .. k, '1', 'PX', left)\n"
    "  end\n"
    "  local alive = 1\n"
    "  if e[1] then alive = redis.call('EXISTS', '" NODE_PREFIX
    "' .. e[1]) end\n"
    "  out[i] = {k, e[1] and 1 or 0, e[1] or '', e[2] or '0', alive}\n"
    "end\n"
    "local index = ARGV[8] == '1' and ARGV[9] or nil\n"
    "if old[2] and old[2] ~= index then\n"
    "  redis.call('ZREM', '" IDX_PREFIX "' .. old[2], key)\n"
    "end\n"
    "local carry = {}\n"
    "if counted or ARGV[2] ~= '1' then\n"
    "  uncount(r, key)\n"
    "else\n"
    "  carry = redis.call('HMGET', r, 'c', 'c1', 'c2', 'c3', 'c4')\n"
    "end\n"
    "redis.call('DEL', r)\n"
    "if ARGV[2] ~= '1' then return {1, out} end\n"
    "redis.call('HSET', r, 'v', ARGV[3], 'f', ARGV[6], 'o', ARGV[7])\n"
    "if ARGV[4] == '1' then redis.call('HSET', r, 'h', ARGV[5]) end\n"
    "if index then redis.call('HSET', r, 'i', index) end\n"
    "redis.call('PEXPIRE', r, ARGV[10])\n"
    "local exp = now + tonumber(ARGV[10])\n"
    "local final = ARGV[6] == '1'\n"
    "if counted then\n"
    "  redis.call('HSET', r, 'c', nb)\n"
    "  for i = 1, nb do\n"
    "    redis.call('HSET', r, 'c' .. i, ARGV[11 + 3 * i])\n"
    "    join(ARGV[11 + 3 * i], key, bytes, exp, ARGV[7], false, final)\n"
    "  end\n"
    "elseif carry[1] then\n"
    "  redis.call('HSET', r, 'c', carry[1])\n"
    "  for i = 1, tonumber(carry[1]) do\n"
    "    if carry[1 + i] then\n"
    "      redis.call('HSET', r, 'c' .. i, carry[1 + i])\n"
    "      join(carry[1 + i], key, nil, exp, ARGV[7], true, final)\n"
    "    end\n"
    "  end\n"
    "end\n"
    "if index then\n"
    "  local ik = '" IDX_PREFIX "' .. index\n"
    "  redis.call('ZADD', ik, ARGV[7], key)\n"
    "  if redis.call('PTTL', ik) < tonumber(ARGV[10]) then\n"
    "    redis.call('PEXPIRE', ik, ARGV[10])\n"
    "  end\n"
    "end\n"
    "return {1, out}\n";

/* A get: KEYS[1] the record, ARGV[1] its key. Returns {} or {record}. */
static const char GET_SCRIPT[] = LUA_COMMON "local r = rec(KEYS[1], ARGV[1])\n"
                                            "if r then return {r} end\n"
                                            "return {}\n";

/* A list: KEYS[1] the index; ARGV after order, after key, max, the
 * index's name. Finds the first member after (order, key) (a binary search
 * among those of that score), then reads on, dropping the members whose
 * record is gone (expired, or moved to another index), at most 4 max + 64
 * of them. Returns {more, {record...}}; more is 1 also when that many were
 * read and others may follow. */
static const char LIST_SCRIPT[] = LUA_COMMON
    "local function after(a, b)\n"
    "  for i = 1, math.min(#a, #b) do\n"
    "    local x, y = a:byte(i), b:byte(i)\n"
    "    if x ~= y then return x > y end\n"
    "  end\n"
    "  return #a > #b\n"
    "end\n"
    "local ik, key, max = KEYS[1], ARGV[2], tonumber(ARGV[3])\n"
    "local lo = redis.call('ZCOUNT', ik, '-inf', '(' .. ARGV[1])\n"
    "local hi = lo + redis.call('ZCOUNT', ik, ARGV[1], ARGV[1])\n"
    "while lo < hi do\n"
    "  local mid = math.floor((lo + hi) / 2)\n"
    "  local m = redis.call('ZRANGE', ik, mid, mid)[1]\n"
    "  if m == nil or after(m, key) then hi = mid else lo = mid + 1 end\n"
    "end\n"
    "local budget = 4 * max + 64\n"
    "local ms = redis.call('ZRANGE', ik, lo, lo + budget - 1)\n"
    "local out, n, more = {}, 0, 0\n"
    "for j = 1, #ms do\n"
    "  local r = rec('" REC_PREFIX "' .. ms[j], ms[j])\n"
    "  if r and r[7] == 1 and r[8] == ARGV[4] then\n"
    "    if n == max then more = 1 break end\n"
    "    n = n + 1\n"
    "    out[n] = r\n"
    "  else\n"
    "    redis.call('ZREM', ik, ms[j])\n"
    "  end\n"
    "end\n"
    "if more == 0 and #ms == budget then more = 1 end\n"
    "return {more, out}\n";

/* The scripts, loaded at each connection: their index in rstore.sha. */
enum { S_RATE, S_PUT, S_GET, S_LIST, NSCRIPTS };
/* The put's script, made of its three parts once (one literal would pass
 * the length C99 compilers must support). */
static char put_script[sizeof PUT_SCRIPT_A + sizeof PUT_SCRIPT_B +
                       sizeof PUT_SCRIPT_C - 2];
static pthread_once_t put_script_once = PTHREAD_ONCE_INIT;

static void put_script_make(void) {
  mcp__fmt(put_script, sizeof put_script, "%s%s%s", PUT_SCRIPT_A, PUT_SCRIPT_B,
           PUT_SCRIPT_C);
}

/* The text of script i. */
static const char *script_text(int i) {
  static const char *const scripts[NSCRIPTS] = {SCRIPT, NULL, GET_SCRIPT,
                                                LIST_SCRIPT};
  if (i != S_PUT)
    return scripts[i];
  pthread_once(&put_script_once, put_script_make);
  return put_script;
}

/* The stream every store on one database shares its events through, and
 * about how many of them Redis keeps (MAXLEN ~: trimmed by whole nodes). */
#define EVENTS_KEY "mcp:events"
#define EVENTS_KEEP "10000"
/* XREAD: the most entries one read returns, and how long it waits for one
 * (ms; "BLOCK"). No reply within BLOCK_MS + TIMEOUT_MS: the link is lost. */
#define READ_COUNT "256"
#define READ_BLOCK "1000"
#define BLOCK_MS 1000
/* A stream id, "ms-seq": two 64-bit numbers in decimal and a dash. */
#define ID_MAX 48

/* A take, an event, a record's put, get or list, or a node's lease (set
 * or dropped). Events and leases are fire-and-forget: nobody is told. */
typedef enum {
  REQ_TAKE,
  REQ_EVENT,
  REQ_PUT,
  REQ_GET,
  REQ_LIST,
  REQ_NODE
} request_kind;

typedef struct request {
  struct request *next;
  request_kind kind;
  unsigned calls, per_s;
  unsigned want; /* a take: the most tokens it takes (1, or a lease's) */
  mcp_store_rate_done done;
  mcp_store_records_done rdone; /* a put, a get or a list */
  void *arg;
  /* A put's (order, ttl_ms, flags) or a list's (order: after it; max). */
  unsigned long long order, ttl_ms;
  unsigned max;
  unsigned lease_ms; /* a node's: 0 drops it */
  bool has_value, has_holder, has_index, final;
  size_t holder_at, index_at, value_at; /* a put's, into data */
  /* A counted put's (nbudgets > 0): the bytes it counts and its budgets,
   * each name at budget_at into data. */
  unsigned nbudgets;
  unsigned long long cbytes;
  unsigned long long max_bytes[MCP_STORE_BUDGETS_MAX];
  unsigned max_records[MCP_STORE_BUDGETS_MAX];
  size_t budget_at[MCP_STORE_BUDGETS_MAX];
  /* The answer, once Redis gave it (or failed), for an answer thread. */
  int rc;
  mcp_store_rate_answer answer;
  redisReply *reply;      /* a record's: what recs point into (owned) */
  mcp_store_record *recs; /* owned unless &one */
  unsigned nrecs;
  bool more;
  mcp_store_record one;
  char *why; /* owned; NULL: why_const */
  const char *why_const;
  size_t len;  /* an event's bytes in data */
  char data[]; /* a take: KEY_PREFIX and the caller's key; an event: its
                  bytes; a put: REC_PREFIX<key>, holder, index (each
                  NUL-terminated), the value, and its budgets' names (each
                  NUL-terminated); a get: REC_PREFIX<key>; a
                  list: IDX_PREFIX<index> and after_key; a node:
                  NODE_PREFIX<name> */
} request;

/* A node joined (mcp_store_node_join): its lease is set again every third
 * of it by the worker. */
typedef struct joined {
  struct joined *next;
  unsigned lease_ms;
  unsigned long long renew_at_us;
  char name[];
} joined;

/* One connection to Redis and what its I/O needs. The worker's is
 * blocking, each command bounded by hiredis's timeout; the reader's is
 * non-blocking, each wait a poll() that the store's stop event (stop_fd)
 * interrupts, so that mcp_store_free never waits for Redis. */
typedef struct conn {
  redisContext *c; /* NULL while down */
  int stop_fd;     /* -1: blocking */
  const mcp__redis_url *url;
  char *why; /* where a failure is told ("what: the reason") */
  size_t whylen;
} conn;

/* The events' reader: a thread of its own on a connection of its own,
 * blocked in XREAD on the stream, that hands each entry to deliver. */
typedef struct reader {
  conn k;
  int stop_fd; /* an eventfd: readable once the store is being freed */
  atomic_bool stop;
  pthread_t thread;
  bool running;
  mcp_store_event deliver;
  void *arg;
  char last[ID_MAX]; /* the id of the last entry seen */
  bool has_last;     /* else the stream's last id is read at connection */
  unsigned backoff_ms;
  char why[400];
} reader;

typedef struct rstore {
  mcp__redis_url url;
  pthread_t thread;
  pthread_mutex_t lock; /* guards the queue and stop */
  pthread_cond_t cond;  /* on CLOCK_MONOTONIC */
  request *head, **tail;
  bool stop;
  joined *nodes; /* rs->lock too */
  /* The worker's own, and new()'s before it starts: */
  conn w;
  char sha[NSCRIPTS][41];
  unsigned long long retry_at_us;
  unsigned long long used_us; /* when the worker's connection last served */
  unsigned backoff_ms;
  char down_why[400];
  /* Whether the worker's connection is up, as the worker last saw it:
   * publish fails at once while it is not. */
  atomic_bool up;
  /* The answers, under a lock of their own (the queue's is the callers'):
   * answered requests, oldest first, and the threads that deliver them.
   * The worker gathers a round's answers in ready (its own) and hands
   * them over at once: one lock and one wake-up per round, not per
   * answer. */
  pthread_mutex_t alock;
  pthread_cond_t answered;
  request *ahead, **atail;
  bool astop;
  request *ready, **rtail;
  pthread_t answerers[ANSWER_THREADS];
  unsigned nanswerers;
  reader rd;
} rstore;

/* A write to a connection Redis closed raises SIGPIPE, which would end the
 * process: the store's threads block it for good (a pending one dies with
 * the thread), and the caller's thread while new() or subscribe talks to
 * Redis, taking back a SIGPIPE it raised. */
static void pipe_block(sigset_t *old) {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &s, old);
}

static void pipe_restore(const sigset_t *old) {
  if (sigismember(old, SIGPIPE))
    return; /* it was blocked before: nothing of ours to take back */
  sigset_t s, pending;
  sigemptyset(&s);
  sigaddset(&s, SIGPIPE);
  if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE)) {
    struct timespec zero = {0, 0};
    sigtimedwait(&s, NULL, &zero);
  }
  pthread_sigmask(SIG_SETMASK, old, NULL);
}

static struct timeval tv_of(unsigned ms) {
  return (struct timeval){.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
}

static void conn_close(conn *k) {
  if (k->c)
    redisFree(k->c);
  k->c = NULL;
}

/* A non-blocking connection's reply to what it has queued: writes it,
 * then reads until a whole reply is there, each wait a poll() of at most
 * what is left of ms. NULL when the connection failed, no reply came in
 * time, or the stop event fired (k->why says which). */
static redisReply *conn_reply(conn *k, unsigned ms) {
  unsigned long long end = mcp__now_us() + ms * 1000ull;
  int written = 0;
  for (;;) {
    void *r = NULL;
    if (!written && redisBufferWrite(k->c, &written) != REDIS_OK)
      break;
    if (written && redisGetReplyFromReader(k->c, &r) != REDIS_OK)
      break;
    if (r)
      return r;
    unsigned long long now = mcp__now_us();
    if (now >= end) {
      mcp__fmt(k->why, k->whylen, "%s: no answer in %u ms", k->url->shown, ms);
      return NULL;
    }
    struct pollfd p[2] = {
        {.fd = k->c->fd, .events = written ? POLLIN : POLLOUT},
        {.fd = k->stop_fd, .events = POLLIN}};
    int n = poll(p, 2, (int)((end - now + 999) / 1000));
    if (n < 0 && errno != EINTR) {
      mcp__fmt(k->why, k->whylen, "%s: poll: %s", k->url->shown,
               strerror(errno));
      return NULL;
    }
    if (n > 0 && p[1].revents) {
      mcp__fmt(k->why, k->whylen, "%s", "the store is being freed");
      return NULL;
    }
    if (n > 0 && written && p[0].revents && redisBufferRead(k->c) != REDIS_OK)
      break;
  }
  mcp__fmt(k->why, k->whylen, "%s: %s", k->url->shown,
           k->c->errstr[0] ? k->c->errstr : "connection closed");
  return NULL;
}

/* Runs one command of argc arguments (lens bytes each) on k: its reply, or
 * NULL when the connection failed (k->why says why; "what" names the
 * command). ms bounds a non-blocking connection's wait. */
static redisReply *conn_command(conn *k, const char *what, int argc,
                                const char **argv, const size_t *lens,
                                unsigned ms) {
  redisReply *r = NULL;
  if (k->stop_fd < 0) {
    r = redisCommandArgv(k->c, argc, argv, lens);
    if (r == NULL)
      mcp__fmt(k->why, k->whylen, "%s %s: %s", what, k->url->shown,
               k->c->errstr);
    return r;
  }
  if (redisAppendCommandArgv(k->c, argc, argv, lens) == REDIS_OK)
    r = conn_reply(k, ms);
  else
    mcp__fmt(k->why, k->whylen, "%s %s", k->url->shown, k->c->errstr);
  if (r == NULL) {
    char tail[400];
    mcp__fmt(tail, sizeof tail, "%s", k->why);
    mcp__fmt(k->why, k->whylen, "%s %s", what, tail);
  }
  return r;
}

/* One command with NUL-terminated arguments that must answer without an
 * error. Returns 0, or MCP_EIO with k->why set ("what: the reason"). */
static int expect_ok(conn *k, const char *what, int argc, const char **argv,
                     redisReply **out) {
  size_t lens[8];
  for (int i = 0; i < argc; i++)
    lens[i] = strlen(argv[i]);
  redisReply *r = conn_command(k, what, argc, argv, lens, TIMEOUT_MS);
  if (r == NULL)
    return MCP_EIO;
  if (r->type == REDIS_REPLY_ERROR) {
    mcp__fmt(k->why, k->whylen, "%s %s refused: %s", what, k->url->shown,
             r->str);
    freeReplyObject(r);
    return MCP_EIO;
  }
  if (out)
    *out = r;
  else
    freeReplyObject(r);
  return 0;
}

/* Opens k's connection (the blocking one bounded by the timeout), logs in
 * and selects the database. Returns 0, or MCP_EIO with k->why set and no
 * connection. */
static int conn_login(conn *k) {
  const mcp__redis_url *u = k->url;
  struct timeval tv = tv_of(TIMEOUT_MS);
  if (k->stop_fd < 0)
    k->c = u->is_unix ? redisConnectUnixWithTimeout(u->path, tv)
                      : redisConnectWithTimeout(u->host, u->port, tv);
  else
    k->c = u->is_unix ? redisConnectUnixNonBlock(u->path)
                      : redisConnectNonBlock(u->host, u->port);
  int rc = MCP_EIO;
  if (k->c == NULL)
    mcp__fmt(k->why, k->whylen, "cannot connect to %s: out of memory",
             u->shown);
  else if (k->c->err)
    mcp__fmt(k->why, k->whylen, "cannot connect to %s: %s", u->shown,
             k->c->errstr);
  else if (k->stop_fd < 0 && redisSetTimeout(k->c, tv) != REDIS_OK)
    mcp__fmt(k->why, k->whylen, "cannot set a timeout on %s", u->shown);
  else
    rc = 0;
  if (rc == 0 && u->has_pass) {
    /* AUTH user password (an ACL user, Redis 6), or AUTH password. */
    const char *with_user[] = {"AUTH", u->user, u->pass};
    const char *alone[] = {"AUTH", u->pass};
    rc = u->user[0] ? expect_ok(k, "AUTH at", 3, with_user, NULL)
                    : expect_ok(k, "AUTH at", 2, alone, NULL);
  }
  if (rc == 0 && u->db != 0) {
    char db[24];
    mcp__fmt(db, sizeof db, "%ld", u->db);
    rc = expect_ok(k, "SELECT at", 2, (const char *[]){"SELECT", db}, NULL);
  }
  if (rc)
    conn_close(k);
  return rc;
}

/* The worker's connection: logs in, selects the database and loads the
 * scripts. */
static int handshake(rstore *rs) {
  int rc = conn_login(&rs->w);
  for (int i = 0; rc == 0 && i < NSCRIPTS; i++) {
    redisReply *r = NULL;
    rc = expect_ok(&rs->w, "SCRIPT LOAD at", 3,
                   (const char *[]){"SCRIPT", "LOAD", script_text(i)}, &r);
    if (rc)
      break;
    if (r->type != REDIS_REPLY_STRING || r->len != 40) {
      mcp__fmt(rs->down_why, sizeof rs->down_why,
               "SCRIPT LOAD at %s: an unexpected answer", rs->url.shown);
      rc = MCP_EIO;
    } else {
      memcpy(rs->sha[i], r->str, 40);
      rs->sha[i][40] = '\0';
    }
    freeReplyObject(r);
  }
  if (rc)
    conn_close(&rs->w);
  return rc;
}

/* Connects the worker (bounded by the timeout). Returns 0, or MCP_EIO
 * with down_why set and the next attempt scheduled. */
static int connect_now(rstore *rs) {
  if (handshake(rs) == 0) {
    rs->backoff_ms = BACKOFF_MIN_MS;
    rs->used_us = mcp__now_us();
    atomic_store(&rs->up, true);
    return 0;
  }
  atomic_store(&rs->up, false);
  rs->retry_at_us = mcp__now_us() + rs->backoff_ms * 1000ull;
  rs->backoff_ms =
      rs->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : rs->backoff_ms * 2;
  return MCP_EIO;
}

/* The connection failed: drop it, retry at once (the next attempt then
 * backs off). */
static void lost(rstore *rs) {
  atomic_store(&rs->up, false);
  mcp__fmt(rs->down_why, sizeof rs->down_why, "lost %s: %s", rs->url.shown,
           rs->w.c->errstr[0] ? rs->w.c->errstr : "connection closed");
  conn_close(&rs->w);
  rs->retry_at_us = mcp__now_us();
}

/* The most arguments of a script: a put's, 14 and 3 per budget. */
#define PUT_ARGS (14 + 3 * MCP_STORE_BUDGETS_MAX)

/* n, or the largest a double holds exactly (the scripts' numbers) when it
 * is above. */
static unsigned long long exact(unsigned long long n) {
  return n < (1ull << 53) ? n : (1ull << 53) - 1;
}

/* Appends the EVALSHA (or EVAL, with the script itself) of script i with
 * argc arguments (lens bytes each), the first key, to the output. */
static bool append_script(rstore *rs, int i, bool eval, int argc,
                          const char **argv, const size_t *lens) {
  const char *all[3 + PUT_ARGS];
  size_t alllens[3 + PUT_ARGS];
  all[0] = eval ? "EVAL" : "EVALSHA";
  all[1] = eval ? script_text(i) : rs->sha[i];
  all[2] = "1";
  for (int j = 0; j < 3; j++)
    alllens[j] = strlen(all[j]);
  for (int j = 0; j < argc; j++) {
    all[3 + j] = argv[j];
    alllens[3 + j] = lens[j];
  }
  return redisAppendCommandArgv(rs->w.c, argc + 3, all, alllens) == REDIS_OK;
}

/* Appends a record's script (a put, a get or a list). */
static bool append_record(rstore *rs, const request *q, bool eval) {
  char order[24], ttl[24], max[16];
  mcp__fmt(order, sizeof order, "%llu", q->order);
  mcp__fmt(ttl, sizeof ttl, "%llu", q->ttl_ms);
  mcp__fmt(max, sizeof max, "%u", q->max);
  const char *name = q->data + sizeof REC_PREFIX - 1; /* IDX_PREFIX's too */
  const char *second = q->data + strlen(q->data) + 1; /* a list's after_key */
  if (q->kind == REQ_GET) {
    const char *argv[] = {q->data, name};
    size_t lens[] = {strlen(q->data), strlen(name)};
    return append_script(rs, S_GET, eval, 2, argv, lens);
  }
  if (q->kind == REQ_LIST) {
    const char *argv[] = {q->data, order, second, max, name};
    size_t lens[5];
    for (int i = 0; i < 5; i++)
      lens[i] = strlen(argv[i]);
    return append_script(rs, S_LIST, eval, 5, argv, lens);
  }
  char bytes[24], nb[8], limits[MCP_STORE_BUDGETS_MAX][2][24];
  mcp__fmt(bytes, sizeof bytes, "%llu", exact(q->cbytes));
  mcp__fmt(nb, sizeof nb, "%u", q->nbudgets);
  const char *argv[PUT_ARGS] = {q->data,
                                name,
                                q->has_value ? "1" : "0",
                                q->data + q->value_at,
                                q->has_holder ? "1" : "0",
                                q->data + q->holder_at,
                                q->final ? "1" : "0",
                                order,
                                q->has_index ? "1" : "0",
                                q->data + q->index_at,
                                ttl,
                                q->nbudgets ? "1" : "0",
                                bytes,
                                nb};
  int argc = 14;
  for (unsigned i = 0; i < q->nbudgets; i++) {
    mcp__fmt(limits[i][0], sizeof limits[i][0], "%u", q->max_records[i]);
    mcp__fmt(limits[i][1], sizeof limits[i][1], "%llu", exact(q->max_bytes[i]));
    argv[argc++] = q->data + q->budget_at[i];
    argv[argc++] = limits[i][0];
    argv[argc++] = limits[i][1];
  }
  size_t lens[PUT_ARGS];
  for (int i = 0; i < argc; i++)
    lens[i] = i == 3 ? q->len : strlen(argv[i]); /* the value: len bytes */
  return append_script(rs, S_PUT, eval, argc, argv, lens);
}

/* Appends q's command to the connection's output: a take's or a record's
 * script (EVALSHA, or EVAL with the script itself), an event's XADD, or a
 * node's SET (its lease) or DEL. Returns false when hiredis ran out of
 * memory (c->err says so). */
static bool append_request(rstore *rs, const request *q, bool eval) {
  if (q->kind == REQ_PUT || q->kind == REQ_GET || q->kind == REQ_LIST)
    return append_record(rs, q, eval);
  if (q->kind == REQ_NODE) {
    char px[16];
    mcp__fmt(px, sizeof px, "%u", q->lease_ms);
    const char *set[] = {"SET", q->data, "1", "PX", px};
    const char *del[] = {"DEL", q->data};
    int argc = q->lease_ms ? 5 : 2;
    size_t lens[5];
    for (int i = 0; i < argc; i++)
      lens[i] = strlen(q->lease_ms ? set[i] : del[i]);
    return redisAppendCommandArgv(rs->w.c, argc, q->lease_ms ? set : del,
                                  lens) == REDIS_OK;
  }
  if (q->kind == REQ_EVENT) {
    const char *argv[] = {"XADD",      EVENTS_KEY, "MAXLEN", "~",
                          EVENTS_KEEP, "*",        "e",      q->data};
    size_t lens[8];
    for (int i = 0; i < 7; i++)
      lens[i] = strlen(argv[i]);
    lens[7] = q->len;
    return redisAppendCommandArgv(rs->w.c, 8, argv, lens) == REDIS_OK;
  }
  char calls[16], per[16], want[16];
  mcp__fmt(calls, sizeof calls, "%u", q->calls);
  mcp__fmt(per, sizeof per, "%u", q->per_s);
  mcp__fmt(want, sizeof want, "%u", q->want);
  const char *argv[] = {q->data, calls, per, want};
  size_t lens[4];
  for (int i = 0; i < 4; i++)
    lens[i] = strlen(argv[i]);
  return append_script(rs, S_RATE, eval, 4, argv, lens);
}

/* ---- the answers -----------------------------------------------------------
 * The engine goes on with a call on the thread that delivers its answer,
 * running the handler there when no executor is installed: the I/O thread
 * only queues answers, and ANSWER_THREADS threads of the store's deliver
 * them, so that a slow handler delays neither Redis's round trips nor
 * (up to their number) other answers. */

/* Readies q, answered (rc, a, why as mcp_store_rate_done's), for the
 * answer threads, which free it; hand_over passes it on. The text is
 * copied; without memory for it, a fixed one says the store failed. The
 * worker's. */
static void deliver(rstore *rs, request *q, int rc,
                    const mcp_store_rate_answer *a, const char *why) {
  q->next = NULL;
  q->rc = rc;
  if (a)
    q->answer = *a;
  q->why = why[0] ? mcp__strdup(why) : NULL;
  q->why_const = why[0] ? "the Redis store failed (out of memory)" : "";
  *rs->rtail = q;
  rs->rtail = &q->next;
}

/* Hands the answers readied to the answer threads: the whole chain at
 * once, waking one thread for one answer and all of them for more. The
 * worker's. */
static void hand_over(rstore *rs) {
  request *q = rs->ready;
  if (q == NULL)
    return;
  pthread_mutex_lock(&rs->alock);
  *rs->atail = q;
  rs->atail = rs->rtail; /* the last one's next */
  if (q->next == NULL)
    pthread_cond_signal(&rs->answered);
  else
    pthread_cond_broadcast(&rs->answered);
  pthread_mutex_unlock(&rs->alock);
  rs->ready = NULL;
  rs->rtail = &rs->ready;
}

/* Frees q and what its answer holds. */
static void request_free(request *q) {
  if (q->recs != &q->one)
    mcp__free(q->recs);
  if (q->reply)
    freeReplyObject(q->reply);
  mcp__free(q->why);
  mcp__free(q);
}

/* An answer thread: delivers answers until told to stop and none is left. */
static void *answerer(void *arg) {
  rstore *rs = arg;
  for (;;) {
    pthread_mutex_lock(&rs->alock);
    while (rs->ahead == NULL && !rs->astop)
      pthread_cond_wait(&rs->answered, &rs->alock);
    request *q = rs->ahead;
    if (q) {
      rs->ahead = q->next;
      if (rs->ahead == NULL)
        rs->atail = &rs->ahead;
    }
    pthread_mutex_unlock(&rs->alock);
    if (q == NULL)
      return NULL;
    const char *why = q->why ? q->why : q->why_const;
    if (q->kind == REQ_TAKE)
      q->done(q->arg, q->rc, q->rc == 0 ? &q->answer : NULL, why);
    else
      q->rdone(q->arg, q->rc, q->rc == 0 ? q->recs : NULL,
               q->rc == 0 ? q->nrecs : 0, q->more, why);
    request_free(q);
  }
}

/* Answers q with an error: Redis cannot be reached. */
static void unavailable(rstore *rs, request *q) {
  char why[512];
  mcp__fmt(why, sizeof why, "Redis is unavailable (%s)", rs->down_why);
  deliver(rs, q, MCP_EIO, NULL, why);
}

/* Answers q from the script's reply r, which it frees. */
static void answer(rstore *rs, request *q, redisReply *r) {
  if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
      r->element[0]->type == REDIS_REPLY_INTEGER &&
      r->element[1]->type == REDIS_REPLY_INTEGER) {
    long long granted = r->element[0]->integer;
    bool allowed = granted >= 1;
    mcp_store_rate_answer a = {
        .allowed = allowed,
        .wait_ms = allowed ? 0 : (unsigned long long)r->element[1]->integer,
        .granted = q->want > 1 && allowed ? (unsigned)granted : 0};
    freeReplyObject(r);
    deliver(rs, q, 0, &a, "");
    return;
  }
  char why[512];
  mcp__fmt(why, sizeof why, "Redis at %s answered the rate script with %s",
           rs->url.shown,
           r->type == REDIS_REPLY_ERROR ? r->str : "an unexpected reply");
  freeReplyObject(r);
  deliver(rs, q, MCP_EIO, NULL, why);
}

/* Reads a record as the scripts answer it (LUA_COMMON's rec) into *out,
 * pointing into e. Returns false when e is not one. */
static bool record_of(const redisReply *e, mcp_store_record *out) {
  if (e->type != REDIS_REPLY_ARRAY || e->elements != 9)
    return false;
  /* The key and the odd ones are texts, the others numbers. */
  for (size_t i = 0; i < 9; i++)
    if (e->element[i]->type !=
        (i == 0 || i % 2 ? REDIS_REPLY_STRING : REDIS_REPLY_INTEGER))
      return false;
  redisReply *const *f = e->element;
  *out = (mcp_store_record){.key = f[0]->str,
                            .value = f[1]->str,
                            .len = (unsigned long)f[1]->len,
                            .holder = f[2]->integer ? f[3]->str : NULL,
                            .final = f[4]->integer != 0,
                            .order = strtoull(f[5]->str, NULL, 10),
                            .index = f[6]->integer ? f[7]->str : NULL,
                            .holder_alive = f[8]->integer != 0};
  return true;
}

/* Reads a list's answer, {more, {record...}}, into q (recs allocated).
 * Returns 0, MCP_EIO (not that) or MCP_ENOMEM. */
static int list_of(request *q, const redisReply *r) {
  if (r->elements != 2 || r->element[0]->type != REDIS_REPLY_INTEGER ||
      r->element[1]->type != REDIS_REPLY_ARRAY ||
      r->element[1]->elements > q->max)
    return MCP_EIO;
  const redisReply *a = r->element[1];
  q->more = r->element[0]->integer != 0;
  if (a->elements == 0)
    return 0;
  q->recs = mcp__calloc(a->elements, sizeof *q->recs);
  if (q->recs == NULL)
    return MCP_ENOMEM;
  for (size_t i = 0; i < a->elements; i++)
    if (!record_of(a->element[i], &q->recs[q->nrecs++]))
      return MCP_EIO;
  return 0;
}

/* Reads a record a counted put evicted, {key, has holder, holder, order,
 * holder alive}, into *out, pointing into e. Returns false when e is not
 * one. */
static bool evicted_of(const redisReply *e, mcp_store_record *out) {
  if (e->type != REDIS_REPLY_ARRAY || e->elements != 5)
    return false;
  for (size_t i = 0; i < 5; i++)
    if (e->element[i]->type !=
        (i == 1 || i == 4 ? REDIS_REPLY_INTEGER : REDIS_REPLY_STRING))
      return false;
  redisReply *const *f = e->element;
  *out = (mcp_store_record){.key = f[0]->str,
                            .holder = f[1]->integer ? f[2]->str : NULL,
                            .order = strtoull(f[3]->str, NULL, 10),
                            .final = true,
                            .holder_alive = f[4]->integer != 0};
  return true;
}

/* Reads the answer of a put that took, {1, {evicted...}}, into q (recs
 * allocated when it evicted). Returns 0, MCP_EIO or MCP_ENOMEM. */
static int written_of(request *q, const redisReply *r) {
  const redisReply *ev = r->elements == 2 ? r->element[1] : NULL;
  if (r->elements > 2 || (ev && ev->type != REDIS_REPLY_ARRAY))
    return MCP_EIO;
  size_t n = ev ? ev->elements : 0;
  if (n > 0 && (q->recs = mcp__calloc(1 + n, sizeof *q->recs)) == NULL)
    return MCP_ENOMEM;
  q->recs[0] = (mcp_store_record){.key = q->data + sizeof REC_PREFIX - 1,
                                  .written = true};
  q->nrecs = 1;
  for (size_t i = 0; i < n; i++)
    if (!evicted_of(ev->element[i], &q->recs[q->nrecs++]))
      return MCP_EIO;
  return 0;
}

/* Reads a record script's reply r into q's answer. Returns 0, MCP_EIO
 * (not what the script answers) or MCP_ENOMEM. */
static int records_of(request *q, const redisReply *r) {
  if (r->type != REDIS_REPLY_ARRAY)
    return MCP_EIO;
  if (q->kind == REQ_LIST)
    return list_of(q, r);
  q->recs = &q->one;
  if (q->kind == REQ_GET) {
    if (r->elements > 1 ||
        (r->elements == 1 && !record_of(r->element[0], &q->one)))
      return MCP_EIO;
    q->nrecs = (unsigned)r->elements;
    return 0;
  }
  if (r->elements < 1 || r->element[0]->type != REDIS_REPLY_INTEGER)
    return MCP_EIO;
  if (r->element[0]->integer == 1)
    return written_of(q, r);
  q->nrecs = 1;
  if (r->element[0]->integer == 3 && r->elements == 1) {
    /* Evicted: its key alone, final. */
    q->one = (mcp_store_record){.key = q->data + sizeof REC_PREFIX - 1,
                                .final = true,
                                .holder_alive = true};
    return 0;
  }
  return r->elements == 2 && record_of(r->element[1], &q->one) ? 0 : MCP_EIO;
}

/* Answers a record's request q from its script's reply r, which it keeps
 * (the answer points into it) or frees. */
static void answer_records(rstore *rs, request *q, redisReply *r) {
  if (q->kind == REQ_PUT && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
      r->element[0]->type == REDIS_REPLY_INTEGER &&
      r->element[0]->integer == 2 &&
      r->element[1]->type == REDIS_REPLY_STRING) {
    /* A budget refused it: why is the script's. */
    deliver(rs, q, MCP_ELIMIT, NULL, r->element[1]->str);
    freeReplyObject(r);
    return;
  }
  int rc = records_of(q, r);
  if (rc == 0) {
    q->reply = r;
    deliver(rs, q, 0, NULL, "");
    return;
  }
  if (q->recs != &q->one)
    mcp__free(q->recs);
  q->recs = NULL;
  q->nrecs = 0;
  q->more = false;
  char why[512];
  if (rc == MCP_ENOMEM)
    mcp__fmt(why, sizeof why, "%s", "out of memory");
  else
    mcp__fmt(why, sizeof why, "Redis at %s answered the record script with %s",
             rs->url.shown,
             r->type == REDIS_REPLY_ERROR ? r->str : "an unexpected reply");
  freeReplyObject(r);
  deliver(rs, q, rc, NULL, why);
}

static bool noscript(const redisReply *r) {
  return r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOSCRIPT", 8) == 0;
}

/* Sends the command of every request of the chain q at once, in its
 * order, then reads the replies in order (one round trip for all) and
 * answers each take, freeing it; without a connection, or once it fails,
 * the rest of the takes are answered with an error. An event is
 * fire-and-forget: its reply (the entry's id) is dropped, and so is the
 * event when Redis did not take it. Returns the chain of the takes whose
 * script Redis had lost (a restart, SCRIPT FLUSH), to send again with
 * eval; none when eval.
 * With resend, a connection that fails before the first reply answers
 * nobody: the whole chain is put in *resend and NULL returned. */
static request *serve_round(rstore *rs, request *q, bool eval,
                            request **resend) {
  for (const request *p = q; p && rs->w.c; p = p->next)
    if (!append_request(rs, p, eval))
      lost(rs);
  request *again = NULL, **tail = &again;
  bool first = true;
  while (q) {
    request *next = q->next;
    void *r = NULL;
    if (rs->w.c && redisGetReply(rs->w.c, &r) != REDIS_OK) {
      lost(rs);
      if (first && resend) {
        /* Nothing of the round was answered: the caller sends it again. */
        *resend = q;
        return NULL;
      }
    }
    first = false;
    if (q->kind == REQ_EVENT || q->kind == REQ_NODE) {
      if (r)
        freeReplyObject(r);
      mcp__free(q);
    } else if (rs->w.c == NULL) {
      unavailable(rs, q);
    } else if (!eval && noscript(r)) {
      freeReplyObject(r);
      q->next = NULL;
      *tail = q;
      tail = &q->next;
    } else if (q->kind == REQ_TAKE) {
      answer(rs, q, r);
    } else {
      answer_records(rs, q, r);
    }
    q = next;
  }
  hand_over(rs);
  return again;
}

/* A node's request: its lease set for lease_ms, or (0) dropped. NULL when
 * out of memory. */
static request *node_request(const char *name, unsigned lease_ms) {
  size_t n = strlen(name);
  request *q = mcp__malloc(sizeof *q + sizeof NODE_PREFIX + n);
  if (q == NULL)
    return NULL;
  *q = (request){.kind = REQ_NODE, .lease_ms = lease_ms};
  memcpy(q->data, NODE_PREFIX, sizeof NODE_PREFIX - 1);
  memcpy(q->data + sizeof NODE_PREFIX - 1, name, n + 1);
  return q;
}

/* Queues q for the worker, under rs->lock. */
static void enqueue_locked(rstore *rs, request *q) {
  *rs->tail = q;
  rs->tail = &q->next;
  pthread_cond_signal(&rs->cond);
}

/* Queues q for the worker. */
static void enqueue(rstore *rs, request *q) {
  pthread_mutex_lock(&rs->lock);
  enqueue_locked(rs, q);
  pthread_mutex_unlock(&rs->lock);
}

/* When the next node's lease is due to be set again (ULLONG_MAX: none
 * joined). Under rs->lock. */
static unsigned long long renew_at_locked(const rstore *rs) {
  unsigned long long next = ULLONG_MAX;
  for (const joined *j = rs->nodes; j; j = j->next)
    if (j->renew_at_us < next)
      next = j->renew_at_us;
  return next;
}

/* Queues the lease of every node due (a third of it passed since it was
 * last set; without memory, a third later), one at a time: the lock is
 * let go while the request is made, so that nothing is called under it. */
static void renew_due(rstore *rs) {
  for (;;) {
    char name[256]; /* a node's name: 64 bytes at most */
    unsigned lease_ms = 0;
    unsigned long long now = mcp__now_us();
    pthread_mutex_lock(&rs->lock);
    for (joined *j = rs->nodes; j && lease_ms == 0; j = j->next)
      if (j->renew_at_us <= now) {
        lease_ms = j->lease_ms;
        j->renew_at_us = now + lease_ms * 1000ull / 3;
        mcp__fmt(name, sizeof name, "%s", j->name);
      }
    pthread_mutex_unlock(&rs->lock);
    if (lease_ms == 0)
      return;
    request *q = node_request(name, lease_ms);
    if (q)
      enqueue(rs, q);
  }
}

/* Waits on rs->cond until the monotonic time until_us at most. */
static void wait_until_locked(rstore *rs, unsigned long long until_us) {
  if (until_us == ULLONG_MAX) {
    pthread_cond_wait(&rs->cond, &rs->lock);
    return;
  }
  unsigned long long now = mcp__now_us();
  if (until_us <= now)
    return;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  unsigned long long wait = until_us - now;
  ts.tv_sec += (time_t)(wait / 1000000);
  ts.tv_nsec += (long)(wait % 1000000) * 1000;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  pthread_cond_timedwait(&rs->cond, &rs->lock, &ts);
}

/* Takes up to BATCH requests off the queue, as a chain, or NULL when it is
 * time to reconnect or to set a lease again (or to stop: *stop). Under no
 * lock; takes rs->lock. */
static request *next_batch(rstore *rs, bool *stop) {
  pthread_mutex_lock(&rs->lock);
  for (;;) {
    unsigned long long now = mcp__now_us();
    unsigned long long until = renew_at_locked(rs);
    if (rs->head != NULL || rs->stop || now >= until)
      break;
    if (rs->w.c == NULL) {
      if (now >= rs->retry_at_us)
        break;
      if (rs->retry_at_us < until)
        until = rs->retry_at_us;
    }
    wait_until_locked(rs, until);
  }
  request *q = rs->head, *last = NULL;
  int n = 0;
  for (request *p = q; p && n < BATCH; p = p->next, n++)
    last = p;
  if (last) {
    rs->head = last->next;
    last->next = NULL;
    if (rs->head == NULL)
      rs->tail = &rs->head;
  }
  *stop = rs->stop;
  pthread_mutex_unlock(&rs->lock);
  return q;
}

/* The store is being freed: its nodes leave (their leases dropped, when
 * the connection is up; else they run out), and are forgotten. */
static void leave_all(rstore *rs) {
  pthread_mutex_lock(&rs->lock);
  joined *j = rs->nodes;
  rs->nodes = NULL;
  pthread_mutex_unlock(&rs->lock);
  unsigned sent = 0;
  for (const joined *p = j; p && rs->w.c; p = p->next) {
    char key[sizeof NODE_PREFIX + 64];
    mcp__fmt(key, sizeof key, "%s%s", NODE_PREFIX, p->name);
    const char *argv[] = {"DEL", key};
    size_t lens[] = {3, strlen(key)};
    if (redisAppendCommandArgv(rs->w.c, 2, argv, lens) == REDIS_OK)
      sent++;
  }
  for (; sent > 0 && rs->w.c; sent--) {
    void *r = NULL;
    if (redisGetReply(rs->w.c, &r) != REDIS_OK)
      lost(rs);
    if (r)
      freeReplyObject(r);
  }
  while (j) {
    joined *next = j->next;
    mcp__free(j);
    j = next;
  }
}

static void *worker(void *arg) {
  rstore *rs = arg;
  sigset_t old;
  pipe_block(&old);
  for (;;) {
    bool stop;
    renew_due(rs);
    request *q = next_batch(rs, &stop);
    if (q == NULL && stop)
      break;
    if (stop) {
      while (q) {
        request *next = q->next;
        if (q->kind == REQ_EVENT || q->kind == REQ_NODE)
          mcp__free(q); /* fire-and-forget: nobody to tell */
        else
          deliver(rs, q, MCP_EIO, NULL, "the Redis store is being freed");
        q = next;
      }
      hand_over(rs);
      continue;
    }
    bool served = q != NULL; /* else a wake-up to reconnect or renew */
    if (rs->w.c == NULL && mcp__now_us() >= rs->retry_at_us)
      connect_now(rs);
    /* A connection idle for a while may have been closed at the other
     * end without a word; Redis then never saw the round: send it again,
     * once, on a new connection. */
    request *resend = NULL;
    bool idle = rs->w.c && mcp__now_us() - rs->used_us >= IDLE_US;
    request *again = serve_round(rs, q, false, idle ? &resend : NULL);
    if (resend) {
      connect_now(rs);
      again = serve_round(rs, resend, false, NULL);
    }
    if (again)
      serve_round(rs, again, true, NULL);
    if (served)
      rs->used_us = mcp__now_us();
  }
  leave_all(rs);
  return NULL;
}

static int rs_lease(void *impl, const char *key, unsigned calls,
                    unsigned per_seconds, unsigned want,
                    mcp_store_rate_done done, void *arg) {
  rstore *rs = impl;
  size_t n = strlen(key);
  request *q = mcp__malloc(sizeof *q + sizeof KEY_PREFIX + n);
  if (q == NULL)
    return MCP_ENOMEM;
  *q = (request){.kind = REQ_TAKE,
                 .calls = calls,
                 .per_s = per_seconds,
                 .want = want,
                 .done = done,
                 .arg = arg};
  memcpy(q->data, KEY_PREFIX, sizeof KEY_PREFIX - 1);
  memcpy(q->data + sizeof KEY_PREFIX - 1, key, n + 1);
  enqueue(rs, q);
  return 0;
}

/* ---- the records ------------------------------------------------------------
 * On the worker's queue with the takes, in their order: a process's puts
 * and gets reach Redis in the order they were made, each one script. */

/* Copies s (NULL: "") into q->data at *at, which moves past it. Returns
 * where it went. */
static size_t put_text(request *q, size_t *at, const char *s, size_t n) {
  size_t where = *at;
  if (s)
    memcpy(q->data + where, s, n);
  q->data[where + (s ? n : 0)] = '\0';
  *at = where + (s ? n : 0) + 1;
  return where;
}

static int rs_put(void *impl, const mcp_store_record *rec,
                  mcp_store_records_done done, void *arg) {
  rstore *rs = impl;
  size_t kn = strlen(rec->key);
  size_t hn = rec->holder ? strlen(rec->holder) : 0;
  size_t in = rec->index ? strlen(rec->index) : 0;
  size_t vn = rec->value ? rec->len : 0;
  const mcp_store_count *c = rec->count;
  size_t bn = 0;
  for (unsigned i = 0; c && i < c->nbudgets; i++)
    bn += strlen(c->budgets[i].name) + 1;
  request *q =
      mcp__malloc(sizeof *q + sizeof REC_PREFIX + kn + hn + in + vn + 3 + bn);
  if (q == NULL)
    return MCP_ENOMEM;
  *q = (request){.kind = REQ_PUT,
                 .rdone = done,
                 .arg = arg,
                 .order = rec->order,
                 .ttl_ms = rec->ttl_ms > TTL_MAX ? TTL_MAX : rec->ttl_ms,
                 .has_value = rec->value != NULL,
                 .has_holder = rec->holder != NULL,
                 .has_index = rec->index != NULL,
                 .final = rec->final,
                 .len = vn};
  memcpy(q->data, REC_PREFIX, sizeof REC_PREFIX - 1);
  size_t at = sizeof REC_PREFIX - 1;
  put_text(q, &at, rec->key, kn);
  q->holder_at = put_text(q, &at, rec->holder, hn);
  q->index_at = put_text(q, &at, rec->index, in);
  q->value_at = put_text(q, &at, rec->value, vn);
  for (unsigned i = 0; c && i < c->nbudgets; i++) {
    const mcp_store_budget *b = &c->budgets[i];
    q->budget_at[i] = put_text(q, &at, b->name, strlen(b->name));
    q->max_records[i] = b->max_records;
    q->max_bytes[i] = b->max_bytes;
  }
  if (c) {
    q->nbudgets = c->nbudgets;
    q->cbytes = c->bytes;
  }
  enqueue(rs, q);
  return 0;
}

static int rs_get(void *impl, const char *key, mcp_store_records_done done,
                  void *arg) {
  rstore *rs = impl;
  size_t n = strlen(key);
  request *q = mcp__malloc(sizeof *q + sizeof REC_PREFIX + n);
  if (q == NULL)
    return MCP_ENOMEM;
  *q = (request){.kind = REQ_GET, .rdone = done, .arg = arg};
  memcpy(q->data, REC_PREFIX, sizeof REC_PREFIX - 1);
  memcpy(q->data + sizeof REC_PREFIX - 1, key, n + 1);
  enqueue(rs, q);
  return 0;
}

static int rs_list(void *impl, const char *index,
                   unsigned long long after_order, const char *after_key,
                   unsigned max, mcp_store_records_done done, void *arg) {
  rstore *rs = impl;
  size_t in = strlen(index), kn = strlen(after_key);
  request *q = mcp__malloc(sizeof *q + sizeof IDX_PREFIX + in + kn + 1);
  if (q == NULL)
    return MCP_ENOMEM;
  *q = (request){.kind = REQ_LIST,
                 .rdone = done,
                 .arg = arg,
                 .order = after_order,
                 .max = max};
  memcpy(q->data, IDX_PREFIX, sizeof IDX_PREFIX - 1);
  size_t at = sizeof IDX_PREFIX - 1;
  put_text(q, &at, index, in);
  put_text(q, &at, after_key, kn);
  enqueue(rs, q);
  return 0;
}

/* Sets (or drops) node's lease now, on the worker's queue, and remembers
 * it so that the worker sets it again every third of it. */
static int rs_join(void *impl, const char *node, unsigned lease_ms) {
  rstore *rs = impl;
  size_t n = strlen(node);
  request *q = node_request(node, lease_ms);
  joined *j = lease_ms ? mcp__malloc(sizeof *j + n + 1) : NULL;
  if (q == NULL || (lease_ms && j == NULL)) {
    mcp__free(q);
    mcp__free(j);
    return MCP_ENOMEM;
  }
  joined *gone = j;
  pthread_mutex_lock(&rs->lock);
  joined **p = &rs->nodes;
  while (*p && strcmp((*p)->name, node) != 0)
    p = &(*p)->next;
  unsigned long long renew = mcp__now_us() + lease_ms * 1000ull / 3;
  if (lease_ms == 0 && *p) {
    gone = *p;
    *p = gone->next;
  } else if (*p) {
    (*p)->lease_ms = lease_ms;
    (*p)->renew_at_us = renew;
  } else if (j) {
    j->next = NULL;
    j->lease_ms = lease_ms;
    j->renew_at_us = renew;
    memcpy(j->name, node, n + 1);
    *p = j;
    gone = NULL;
  }
  enqueue_locked(rs, q);
  pthread_mutex_unlock(&rs->lock);
  mcp__free(gone);
  return 0;
}

static int rs_take(void *impl, const char *key, unsigned calls,
                   unsigned per_seconds, mcp_store_rate_done done, void *arg) {
  return rs_lease(impl, key, calls, per_seconds, 1, done, arg);
}

/* An event goes on the worker's queue with the takes, so that one
 * connection sends this store's events in the order they were published.
 * While the worker knows Redis is down nobody would hear it: MCP_EIO at
 * once. */
static int rs_publish(void *impl, const char *event, unsigned long len) {
  rstore *rs = impl;
  if (!atomic_load(&rs->up))
    return MCP_EIO;
  request *q = mcp__malloc(sizeof *q + len);
  if (q == NULL)
    return MCP_ENOMEM;
  *q = (request){.kind = REQ_EVENT, .len = len};
  memcpy(q->data, event, len);
  enqueue(rs, q);
  return 0;
}

/* ---- the events' reader ----------------------------------------------------
 * Its own connection and thread, so that a read blocked on the stream
 * delays no take. It remembers the id of the last entry it saw and reads
 * on from there, also after a lost link: what was published meanwhile
 * (as long as the stream still holds it) is delivered once it is back. */

/* Waits ms, or until the store is being freed: then returns true. */
static bool reader_pause(reader *rd, unsigned ms) {
  struct pollfd p = {.fd = rd->stop_fd, .events = POLLIN};
  unsigned long long end = mcp__now_us() + ms * 1000ull;
  for (;;) {
    if (atomic_load(&rd->stop))
      return true;
    unsigned long long now = mcp__now_us();
    if (now >= end)
      return false;
    if (poll(&p, 1, (int)((end - now + 999) / 1000)) > 0)
      return true;
  }
}

/* The id of the stream's last entry ("0-0" when it has none): where the
 * first read starts, so that it misses nothing published after it. Returns
 * 0, or MCP_EIO. */
static int reader_last_id(reader *rd) {
  redisReply *r = NULL;
  int rc = expect_ok(
      &rd->k, "XREVRANGE at", 6,
      (const char *[]){"XREVRANGE", EVENTS_KEY, "+", "-", "COUNT", "1"}, &r);
  if (rc)
    return rc;
  const redisReply *id = NULL;
  if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
      r->element[0]->type == REDIS_REPLY_ARRAY && r->element[0]->elements == 2)
    id = r->element[0]->element[0];
  if (r->type == REDIS_REPLY_ARRAY && r->elements == 0) {
    mcp__fmt(rd->last, sizeof rd->last, "%s", "0-0");
    rd->has_last = true;
  } else if (id && id->type == REDIS_REPLY_STRING && id->len < ID_MAX) {
    memcpy(rd->last, id->str, id->len);
    rd->last[id->len] = '\0';
    rd->has_last = true;
  } else {
    mcp__fmt(rd->why, sizeof rd->why, "XREVRANGE at %s: an unexpected answer",
             rd->k.url->shown);
    rc = MCP_EIO;
  }
  freeReplyObject(r);
  return rc;
}

/* Connects, logs in and, the first time, learns where to start. Returns 0,
 * or MCP_EIO without a connection. */
static int reader_connect(reader *rd) {
  int rc = conn_login(&rd->k);
  if (rc == 0 && !rd->has_last && (rc = reader_last_id(rd)) != 0)
    conn_close(&rd->k);
  return rc;
}

/* Hands each entry of XREAD's reply r to deliver, in order, and remembers
 * the last id. Returns 0, or MCP_EIO when r is not what XREAD answers. */
static int reader_deliver(reader *rd, const redisReply *r) {
  if (r->type == REDIS_REPLY_NIL)
    return 0; /* BLOCK passed without an entry */
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 1 ||
      r->element[0]->type != REDIS_REPLY_ARRAY ||
      r->element[0]->elements != 2 ||
      r->element[0]->element[1]->type != REDIS_REPLY_ARRAY)
    return MCP_EIO;
  const redisReply *entries = r->element[0]->element[1];
  for (size_t i = 0; i < entries->elements; i++) {
    const redisReply *e = entries->element[i];
    if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
        e->element[0]->type != REDIS_REPLY_STRING ||
        e->element[0]->len >= ID_MAX ||
        e->element[1]->type != REDIS_REPLY_ARRAY)
      return MCP_EIO;
    memcpy(rd->last, e->element[0]->str, e->element[0]->len);
    rd->last[e->element[0]->len] = '\0';
    const redisReply *f = e->element[1];
    for (size_t j = 0; j + 1 < f->elements; j += 2)
      if (f->element[j]->type == REDIS_REPLY_STRING &&
          f->element[j]->len == 1 && f->element[j]->str[0] == 'e' &&
          f->element[j + 1]->type == REDIS_REPLY_STRING &&
          f->element[j + 1]->len > 0)
        rd->deliver(rd->arg, f->element[j + 1]->str,
                    (unsigned long)f->element[j + 1]->len);
  }
  return 0;
}

/* Reads the stream from the last id on, for good: on a failure it drops
 * the connection and reconnects with a growing pause, as the worker does. */
static void *reader_run(void *arg) {
  reader *rd = arg;
  sigset_t old;
  pipe_block(&old);
  while (!atomic_load(&rd->stop)) {
    if (rd->k.c == NULL && reader_connect(rd) != 0) {
      if (reader_pause(rd, rd->backoff_ms))
        break;
      rd->backoff_ms = rd->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS
                                                           : rd->backoff_ms * 2;
      continue;
    }
    const char *argv[] = {"XREAD",    "COUNT",   READ_COUNT, "BLOCK",
                          READ_BLOCK, "STREAMS", EVENTS_KEY, rd->last};
    size_t lens[8];
    for (int i = 0; i < 8; i++)
      lens[i] = strlen(argv[i]);
    redisReply *r =
        conn_command(&rd->k, "XREAD at", 8, argv, lens, BLOCK_MS + TIMEOUT_MS);
    int rc =
        r && r->type != REDIS_REPLY_ERROR ? reader_deliver(rd, r) : MCP_EIO;
    if (r)
      freeReplyObject(r);
    if (rc == 0) {
      rd->backoff_ms = BACKOFF_MIN_MS;
      continue;
    }
    /* Lost, refused or garbled: a new connection, after a pause (an error
     * that comes back at once, such as a missing permission, must not
     * spin). */
    conn_close(&rd->k);
    if (reader_pause(rd, rd->backoff_ms))
      break;
    rd->backoff_ms = rd->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS
                                                         : rd->backoff_ms * 2;
  }
  return NULL;
}

/* Connects the reader on the caller's thread first (bounded by the
 * timeout for each step), so that it starts at the stream's last id as of
 * now and every event published after this returns is delivered. When
 * Redis cannot be reached now the thread keeps trying, and starts where
 * the stream ends once it can. */
static int rs_subscribe(void *impl, mcp_store_event fn, void *arg) {
  rstore *rs = impl;
  reader *rd = &rs->rd;
  if (rd->running)
    return MCP_EEXIST;
  rd->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (rd->stop_fd < 0)
    return MCP_ENOMEM;
  rd->k = (conn){.stop_fd = rd->stop_fd,
                 .url = &rs->url,
                 .why = rd->why,
                 .whylen = sizeof rd->why};
  rd->deliver = fn;
  rd->arg = arg;
  rd->has_last = false;
  rd->backoff_ms = BACKOFF_MIN_MS;
  atomic_store(&rd->stop, false);
  sigset_t old;
  pipe_block(&old);
  reader_connect(rd);
  pipe_restore(&old);
  if (mcp__thread_start(&rd->thread, NULL, reader_run, rd) != 0) {
    conn_close(&rd->k);
    close(rd->stop_fd);
    return MCP_ENOMEM;
  }
  rd->running = true;
  return 0;
}

/* Stops the reader: deliver is not called once this returned. */
static void reader_stop(rstore *rs) {
  reader *rd = &rs->rd;
  if (!rd->running)
    return;
  atomic_store(&rd->stop, true);
  uint64_t one = 1;
  ssize_t n = write(rd->stop_fd, &one, sizeof one);
  (void)n; /* only full at 2^64 - 1 writes; stop is set anyway */
  pthread_join(rd->thread, NULL);
  conn_close(&rd->k);
  close(rd->stop_fd);
  rd->running = false;
}

static void rs_describe(void *impl, char *buf, unsigned long size) {
  const rstore *rs = impl;
  mcp__fmt(buf, size, "%s", rs->url.shown);
}

/* Stops the answer threads once every answer queued is delivered. */
static void answerers_stop(rstore *rs) {
  pthread_mutex_lock(&rs->alock);
  rs->astop = true;
  pthread_cond_broadcast(&rs->answered);
  pthread_mutex_unlock(&rs->alock);
  for (unsigned i = 0; i < rs->nanswerers; i++)
    pthread_join(rs->answerers[i], NULL);
  rs->nanswerers = 0;
}

static void rs_destroy(rstore *rs) {
  answerers_stop(rs);
  while (rs->nodes) {
    joined *j = rs->nodes;
    rs->nodes = j->next;
    mcp__free(j);
  }
  conn_close(&rs->w);
  pthread_cond_destroy(&rs->answered);
  pthread_cond_destroy(&rs->cond);
  pthread_mutex_destroy(&rs->alock);
  pthread_mutex_destroy(&rs->lock);
  mcp__free(rs);
}

static void rs_free(void *impl) {
  rstore *rs = impl;
  reader_stop(rs);
  pthread_mutex_lock(&rs->lock);
  rs->stop = true;
  pthread_cond_signal(&rs->cond);
  pthread_mutex_unlock(&rs->lock);
  pthread_join(rs->thread, NULL);
  rs_destroy(rs);
}

static const mcp_store_ops redis_ops = {.rate_take = rs_take,
                                        .describe = rs_describe,
                                        .free = rs_free,
                                        .shared = true,
                                        .publish = rs_publish,
                                        .subscribe = rs_subscribe,
                                        .rate_lease = rs_lease,
                                        .record_put = rs_put,
                                        .record_get = rs_get,
                                        .record_list = rs_list,
                                        .node_join = rs_join};

/* The locks, the conditions (the queue's on the monotonic clock). */
static int rs_sync_init(rstore *rs) {
  pthread_condattr_t ca;
  if (pthread_condattr_init(&ca) != 0)
    return MCP_ENOMEM;
  int ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
           pthread_cond_init(&rs->cond, &ca) == 0;
  pthread_condattr_destroy(&ca);
  if (!ok)
    return MCP_ENOMEM;
  if (pthread_cond_init(&rs->answered, NULL) != 0) {
    pthread_cond_destroy(&rs->cond);
    return MCP_ENOMEM;
  }
  if (pthread_mutex_init(&rs->lock, NULL) != 0) {
    pthread_cond_destroy(&rs->answered);
    pthread_cond_destroy(&rs->cond);
    return MCP_ENOMEM;
  }
  if (pthread_mutex_init(&rs->alock, NULL) != 0) {
    pthread_mutex_destroy(&rs->lock);
    pthread_cond_destroy(&rs->answered);
    pthread_cond_destroy(&rs->cond);
    return MCP_ENOMEM;
  }
  rs->atail = &rs->ahead;
  rs->rtail = &rs->ready;
  return 0;
}

int mcp_redis_store_new(const char *url, mcp_store **out, char *err,
                        size_t errlen) {
  char why[512], scratch[600];
  char *e = err ? err : scratch; /* never why: it is formatted into e */
  size_t el = err ? errlen : sizeof scratch;
  if (out == NULL) {
    mcp__fmt(e, el, "%s", "no place for the store");
    return MCP_EINVAL;
  }
  *out = NULL;
  rstore *rs = mcp__calloc(1, sizeof *rs);
  if (rs == NULL) {
    mcp__fmt(e, el, "%s", "out of memory");
    return MCP_ENOMEM;
  }
  int rc = mcp__redis_url_parse(url, &rs->url, why, sizeof why);
  if (rc) {
    mcp__free(rs);
    mcp__fmt(e, el, "bad Redis URL: %s", why);
    return rc;
  }
  if ((rc = rs_sync_init(rs)) != 0) {
    mcp__free(rs);
    mcp__fmt(e, el, "%s", "out of memory");
    return rc;
  }
  rs->tail = &rs->head;
  rs->backoff_ms = BACKOFF_MIN_MS;
  rs->w = (conn){.stop_fd = -1,
                 .url = &rs->url,
                 .why = rs->down_why,
                 .whylen = sizeof rs->down_why};
  sigset_t old;
  pipe_block(&old);
  rc = connect_now(rs);
  pipe_restore(&old);
  if (rc != 0) {
    mcp__fmt(e, el, "%s", rs->down_why);
    rs_destroy(rs);
    return MCP_EIO;
  }
  for (; rs->nanswerers < ANSWER_THREADS; rs->nanswerers++)
    if (mcp__thread_start(&rs->answerers[rs->nanswerers], NULL, answerer, rs) !=
        0) {
      mcp__fmt(e, el, "%s", "cannot start the store's answer threads");
      rs_destroy(rs);
      return MCP_ENOMEM;
    }
  if (mcp__thread_start(&rs->thread, NULL, worker, rs) != 0) {
    mcp__fmt(e, el, "%s", "cannot start the store's thread");
    rs_destroy(rs);
    return MCP_ENOMEM;
  }
  mcp_store *st = mcp_store_new(&redis_ops, rs);
  if (st == NULL) {
    rs_free(rs);
    mcp__fmt(e, el, "%s", "out of memory");
    return MCP_ENOMEM;
  }
  *out = st;
  return 0;
}
