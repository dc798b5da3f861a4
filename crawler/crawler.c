/*
 * crawler.c - the crawl loop: the frontier and the fetcher, wired.
 *
 * WHAT A CRAWL LOOP DOES
 * The frontier (frontier/frontier.c) knows what may be fetched and when;
 * the fetcher (fetcher/fetcher.c) fetches many URLs at once on one thread
 * and finds the links in what comes back. Neither knows the other. The
 * loop between them is the same in every crawler, and it is the part each
 * reuser of the frontier would otherwise write again (and get subtly
 * wrong: a lost robots.txt answer, a redirect chain that never ends, a
 * transfer whose URL is freed under it). This file is that loop:
 *
 *     seeds -> frontier.add -> frontier.next -> fetcher.add -> fetcher.run
 *                  ^                                             |
 *                  |   page done: its links and redirect target  |
 *                  +---- admitted, then frontier.done -----------+
 *                  +---- robots.txt done: frontier.robots_done --+
 *
 * THE FETCH/ADMIT CYCLE
 * One turn (bc_crawler_step) first DISPATCHES: while fewer than
 * `concurrency` transfers are in flight, ask the frontier for its next job.
 *   FETCH        start a transfer of job.url (links extracted);
 *   FETCH_ROBOTS start a transfer that keeps the first 500 KiB of the body
 *                (BC_ROBOTS_MAX_BYTES: RFC 9309 2.5 asks a crawler to read
 *                at least that much, and a longer file is cut, not failed);
 *   FETCH_SITEMAP start a transfer whose 2xx body streams through the
 *                sitemap parser (bloomcrawl/sitemap.h), which stops it
 *                past 50,000 URLs or 50 MiB of XML;
 *   DROP         a queued URL now disallowed, or of a given-up host: count;
 *   WAIT         nothing may be fetched before job.wait_until_ms: stop;
 *   DONE         nothing queued: stop (the crawl is over once nothing is in
 *                flight either).
 * Then it RUNS the fetcher: network I/O, waiting at most until the next
 * host is due. Each finished transfer COMPLETES:
 *   a robots.txt goes to frontier.robots_done() - a body read in full or up
 *     to its limit is an answer; any failure is "unreachable" (status 0),
 *     which blocks the host and is retried, never "allow all";
 *   a sitemap is done (frontier.sitemap_done); its entries were admitted
 *     as they streamed in: pages through bc_frontier_add_from_sitemap (depth
 *     0, within the sitemap's scope), an index's sitemaps through
 *     bc_frontier_add_sitemap. A kill before its done() is committed
 *     fetches it again on resume: its pages then meet the seen-test;
 *   a page has its links admitted (bc_frontier_add, at depth + 1, against
 *     the page's URL or its resolved <base href>), its redirect target
 *     admitted, its result counted and given to on_page, and then the
 *     frontier told with frontier.done() (status, response time,
 *     Retry-After), which sets when its host may be asked again.
 *
 * THE PAGE AND ITS LINKS ARE ONE EVENT
 * The fetcher reports links while the body streams in. They are not
 * admitted then: each transfer buffers its page's links (and the base
 * they resolve against, once per change) and all are admitted at the
 * page's completion, in document order, right before frontier.done(). So
 * "this page was fetched and these are its links" happens at one point of
 * the code, complete_page(), where a durable crawl state can record both
 * in one transaction. The buffer holds the hrefs plus a small header per
 * link; --max-body (fetcher.max_body_bytes) caps the body, so it caps the
 * buffer too. The links of a transfer that fails half way are admitted as
 * well (they were found), as they were when admitted on the fly.
 *
 * REDIRECTS ARE DISCOVERED URLS
 * The fetcher does not follow redirects. A 3xx with a Location is a
 * finished page whose target is admitted like a link - normalized, put
 * through the limits, robots.txt and the seen-test - at the depth of the
 * page that redirected (bc_frontier_add_redirect). So a redirect to a page
 * already fetched costs nothing, a redirect to another host waits for that
 * host's robots.txt and politeness, and the target is fetched once however
 * many URLs redirect to it. Redirect loops end in the seen-test; a chain
 * of new URLs (/r/1 -> /r/2 -> ...) would not, so each queued URL carries
 * its hop count, and the hop after max_redirects is refused: that page
 * counts as a BC_CRAWLER_ERR_TOO_MANY_REDIRECTS failure.
 *
 * CLEAN STOP
 * bc_crawler_stop() only stops dispatching. Transfers in flight finish
 * and complete as usual (their pages reported, their links admitted, the
 * frontier told), and the crawl is over when none is left. Nothing is
 * half done: every job handed out is either completed or, if the crawler
 * is freed first, abandoned with its transfer.
 *
 * OUT OF MEMORY
 * frontier.next() out of memory changes nothing: the dispatcher stops and
 * asks again 100 ms later. A link that cannot be buffered is lost and
 * counted (links_nomem). A transfer that cannot be started for want of
 * memory, or that fails for want of one, is a local failure (below),
 * never its page's outcome.
 *
 * LOCAL FAILURES: OURS, NOT THE PAGE'S
 * A transfer can fail because this machine ran out of something: a
 * descriptor for its socket (EMFILE: curl then says "Couldn't connect",
 * and a crawl at `ulimit -n 30` once recorded 997 pages as connect
 * failures and ended "complete"), memory in the middle of the transfer, a
 * WARC spool that cannot be opened or written. The page is fine; another
 * try later will work. So bc_crawler_fault_of() (the one table) classes
 * such a result BC_FAULT_LOCAL, and on_done() - or start(), when the
 * transfer could not even start for want of memory - gives the job back
 * to the frontier (bc_frontier_giveback(): queued again as if never
 * handed out, nothing counted against the URL or its host): no on_page,
 * no counters but local_failures and local_errno. Then the crawl asks
 * less of the machine, the way TCP answers a loss (RFC 5681, additive
 * increase, multiplicative decrease):
 *
 *     intake = max(1, intake / 2)     at a local failure (one cut per
 *                                     pause: a burst of EMFILE from one
 *                                     fetcher run is one event)
 *     intake = min(concurrency, intake + 1)   per good completion
 *
 * and the dispatcher starts nothing for a pause after it (100 ms, doubled
 * for each local failure in a row up to 1 s), so a job given back is not
 * handed out again at once and the loop never spins on a machine that
 * says no. A resource that does not come back is not waited for for ever:
 * when local failures go on for local_wait_ms with no transfer completing
 * without one, the step returns the local error (BC_ERR_IO for
 * descriptors, BC_ERR_NOMEM for memory; bc_crawler_local_error() gives
 * the errno), and a crawl with a state resumes from its last commit once
 * the resource is there. A WARC *file* write error is something else: it
 * is sticky (ARCHIVING below).
 *
 * A CRAWL THAT SURVIVES (config.state)
 * With a crawl state (crawler/state.c) the frontier writes every change
 * to the state's open transaction, and a turn that hands a job out
 * commits after dispatching and before the fetcher runs: so a URL handed
 * out is recorded as in flight before its transfer can start, and the
 * pages completed since the last commit (page_done, their links
 * admitted) are committed with it before their transfer slots carry
 * other requests. A kill loses at most the turns since the last commit:
 * the pages completed in them, which were in flight at that commit, are
 * fetched again on resume (at most `concurrency`). After a commit, every
 * SNAPSHOT_MS, the seen-test's Bloom filter is saved: it then holds
 * exactly the committed admissions. Whatever was admitted between two
 * steps (seeds, URLs routed here by other workers, the outbox rows their
 * route() calls wrote) is in the transaction too: a step that returns
 * BC_OK has committed it. The state is reached through its private doors
 * (state_int.h); before the frontier is built, the settings a resume may
 * not change are checked (PINNED SETTINGS, bc_crawler_pin()).
 *
 * THE TURN'S COMMIT
 * What forces a commit is a hand-out: its URL must be in flight on disk
 * before its request can be sent (state.c's I4), or a kill would fetch it
 * again without counting it as refetched. A completion forces none: its
 * page was in flight at the last commit, so a kill before the next one
 * fetches it again and loses nothing. A commit is one WAL write of the
 * pages it changed (about seven of 8 KiB: the counters', the host's, the
 * flight rows', ...) whether it covers one page or sixteen, and a loop
 * that commits in every turn commits for every page that completes on
 * its own. So a step commits when it hands a job out, when others wrote
 * to the state since the last step (a seed, a routed URL: the
 * acknowledgements of crawl workers wait for it), when the crawl is over,
 * and otherwise once COMMIT_HOLD_MS passed since the last commit; and
 * while transfers are in flight with fewer than half the slots free and
 * the last commit under COMMIT_HOLD_MS old, it hands nothing out
 * (hold_dispatch()): the next turn fills the slots freed meanwhile under
 * one commit. A slot waits at most COMMIT_HOLD_MS for that, and a
 * completed page about that long at most to be committed. The price: a
 * slot held empty is a request started up to COMMIT_HOLD_MS later,
 * which costs wall time when the loop waits for the servers rather than
 * the servers for the loop. On the generated site of
 * bench/bench_warc.sh (4 hosts, 32 transfers, a loop busy with parsing;
 * 86,550 pages, so 2,705 commits at the least) this took the commits of
 * a crawl from 4,861-7,362 to 3,115-3,345 (the more the machine's load
 * broke the turns up, the more) and, in the quietest run, --state's CPU
 * over the bare crawl's from 5.3 s to 3.2 s (not in every run of a
 * shared machine); on the PostgreSQL manual (one host,
 * 16 transfers, 73 at the least) from 78-150 (on a quiet machine the
 * loop outruns the server and the turns break up) to 77-82, and
 * --state's CPU by 12 ms a crawl of 0.2 s (medians)
 * (bench/results/state-analysis.md).
 *
 * CRAWL WORKERS (frontier.partition, page_budget)
 * A partitioned frontier routes the URLs of other workers' hosts instead
 * of queuing them (routed_out counts them); bc_crawler_add_routed() takes
 * those other workers routed here (routed_in). A shared page budget hands
 * out one token at a time: the dispatcher asks for one before it asks the
 * frontier for a job, a FETCH that starts spends it, a DONE or a stop
 * gives it back, and a refusal ends the step's dispatching as max_pages
 * does (the next step asks again).
 *
 * ARCHIVING (config.warc)
 * Every transfer goes through start() and on_done(), whatever it fetches
 * (a page, a robots.txt, any kind added later), so that is where the
 * WARC is hooked: start() notes the wall-clock time (the records'
 * WARC-Date and the page's fetched_at); the fetcher's wire callbacks open
 * the response record when the final response's head has come and spool
 * the body as received (the request head is kept as sent, less its
 * Proxy-Authorization lines: a proxy's password stays out of archives);
 * on_done() writes the request record, then the response record,
 * before the page is completed (its on_page gets the response record's
 * file and offset) - in the turn that completes the page, so that the
 * next commit, which also records the writer's position, covers both the
 * page and its records. A kill cuts the WARC back to that position on
 * resume, as it cuts --out: a record is in the file exactly when its page
 * is committed. Failed transfers drop their
 * open record, except a body over max_body_bytes: the response as far as
 * it was read is kept, "WARC-Truncated: length" (the page still counts
 * as a too_large failure). A record's spool (one open file per transfer)
 * that cannot be opened or written is a local failure of that transfer:
 * its record is dropped, the transfer stopped and given back (LOCAL
 * FAILURES). A write error of the WARC file is sticky: no more records,
 * and the crawl stops before the next commit.
 *
 * IDENTICAL PAYLOADS (config.payload_dedup)
 * The same bytes come under URLs no normalization can merge (mirrors,
 * session IDs in paths, index.html beside its directory). The crawl keeps
 * an index of payload digests (payloads.c): for each SHA-1 of a page's
 * payload, the first page that had it and its response record. The
 * digest is the one WARC-Payload-Digest carries: the WARC writer's, asked
 * before the record ends (bc_warc_record_payload_sha1()); without a
 * writer the crawler hashes the payload itself from on_wire_payload, in
 * the same pass as the fetcher reads it. At completion (payload_lookup(),
 * before the records are written) a payload found in the index makes the
 * response a revisit record naming the first one's record
 * (bc_warc_record_end_revisit()), and the page's report names the first
 * URL (duplicate_of); a new one enters the index, and with a state its row
 * (payload_put()) is written in the turn's transaction with the page, so
 * the index on disk is exactly the committed pages' and a kill loses
 * nothing it did not also lose of the WARC and --out, which are cut back
 * to the same commit. A resume reads the rows back (bc_crawler_create()),
 * and so does a recrawl of the same state: a page fetched again with the
 * bytes it had is a revisit of its first record.
 * Indexed: a page's whole response (no error, not cut), 2xx, with at least
 * one payload byte. Not an empty body, nor a 404, 410 or 500: every empty
 * body and every error page of a site would be "a duplicate" of the first
 * one, though they say nothing about content; nor a redirect: its body is
 * boilerplate and its meaning is in its Location, which a revisit would
 * keep but which duplicate_of would blur (two redirects to different
 * targets with the same "Moved" body are not the same page). Robots.txt
 * and sitemaps are not pages: archived whole. An entry first indexed
 * without a WARC record (a run without a writer, with the same state)
 * gets the first record written for its payload.
 *
 * CONDITIONAL RECRAWLS (config.conditional)
 * A page fetched again (a recrawl after the window, or a --revisit at
 * start) is most often unchanged; HTTP lets the server say so in a few
 * bytes (RFC 9110 13.1). For each page whose whole 2xx response had an
 * ETag or a Last-Modified, the crawl keeps them per URL with the WARC
 * record holding that page's payload (its own response, or, for an
 * identical payload, the original's that its revisit names): in the
 * state's validators table, written in the turn's transaction with the
 * page (so a resume knows exactly the committed pages'), or without a
 * state in memory (validators.c); only when recrawl_after_ms is set:
 * without it no page is fetched twice, in a run or in a resume of its
 * state (the window is pinned), so neither the rows nor the lookup on
 * every fetch would ever serve. A page's fetch looks its
 * URL up (conditional_lookup(), one B-tree or hash lookup); a URL with a
 * row was fetched before with a 2xx, so this is a recrawl, and its
 * request carries If-None-Match and/or If-Modified-Since
 * (bc_fetcher_add_with_headers()). A 304 to it is the page's outcome:
 * not_modified in its report, counted apart, not an error, and with a
 * WARC writer a revisit record of profile server-not-modified naming the
 * last fetch's record (bc_warc_record_end_not_modified()). A 304 has no
 * body, so no links are extracted: those of the last fetch were admitted
 * then, and each of them is recrawled by its own age in the window, not
 * by this page's. Its row stays as it was (the record named is still the
 * last whole response). A server that ignores the validators answers
 * 200: a normal fetch, whose new validators replace the row (and whose
 * payload may be a duplicate: IDENTICAL PAYLOADS). A 2xx without
 * validators empties a URL's row, so stale ones are never sent. Robots.txt
 * and sitemaps are fetched whole, as before.
 *
 * LASTMOD (a state, recrawl_after_ms, frontier.sitemaps)
 * The window makes a page due by its age alone; a site that lists its
 * pages in a sitemap says which changed: a <url>'s <lastmod>. A page
 * whose <lastmod> is later than its last fetch is due at once, however
 * young in its window: it is admitted though the seen-test says seen
 * (bc_frontier_add_from_sitemap_due()), and fetched as any recrawl is
 * (conditionally, with its validators). "Its last fetch" is the state's
 * fetched row (state.c, FETCHED): the time its request was started, on
 * the recrawl clock in seconds, written in the turn's transaction with
 * the page when it was answered with a whole 2xx or a 304 (a 3xx, 4xx,
 * 5xx or a failure leaves the row as it was: the page is not known
 * fresh). Its start, not its end: a page changed while it was in flight
 * is fetched again. The row is also stamped with the time a page is
 * queued to be fetched again (by a newer <lastmod> here, or as due by
 * bc_crawler_revisit()), so a page listed by two sitemaps, or already
 * queued by the revisit, is queued once. A <lastmod> no later than the
 * row is ignored, as is one later than the recrawl clock now (a date in
 * the future says nothing of a change that happened; honoured, it would
 * make the page due in every run until that date), and a URL without a
 * row (never fetched whole: new, an error page, or fetched before this
 * table existed) is admitted or refused by the seen-test alone. The
 * lookup is one B-tree probe per sitemap entry with a <lastmod> that the
 * seen-test calls seen; the write, one row per page fetched. Only with a
 * state, the only way a sitemap is read again after its pages were
 * fetched: a sitemap is fetched once per run, before the pages of its
 * host, and a run over the state that should read it again asks for it
 * (bc_crawl_state_sitemaps_again(), crawl --revisit). Counted:
 * lastmod_due.
 *
 * NEAR-DUPLICATES (config.near_dedup)
 * Identical payloads miss the copies that differ in a byte: a session ID
 * in the page's own links, a print version's frame, a timestamp, a
 * banner, a soft 404 that names the URL it was asked for (with text
 * enough beside that name: WHAT IS LOST in simhash.c). The crawl takes
 * a 64-bit simhash (dedup/simhash.c) of each page's visible text while
 * the link extractor reads the body for links: the fetcher hands the
 * extractor's text runs (links.h, on_text: no script, style, template)
 * to on_text, which feeds bc_simhash_feed_text() - the same pass over the
 * same tokens, no copy of the body, no second parse. At completion
 * (near_check(), in complete_page() before the page's links are admitted)
 * the fingerprint is looked up in a bc_simhash_index of the earlier
 * pages' (bc_simhash_index_query(), within near_k bits): one within k
 * makes the page a near-duplicate of that page, reported in
 * near_duplicate_of with the distance; none makes it the first page of a
 * cluster, added to the index (near_add()). An id in the index is the offset of the
 * first page's URL in near_urls (a buffer of NUL-terminated URLs, one per
 * fingerprint), so a match names it at no other cost. With a state the
 * fingerprint's row (state.c, FINGERPRINTS) is written in the turn's
 * transaction with its page, as a payload's is: a kill loses exactly what
 * it loses of the pages, and a resume reads the rows back in their order
 * (bc_crawler_create()), so a copy fetched after a kill -9 still names
 * the original fetched before it.
 * Fingerprinted: a page's whole 2xx HTML response (the pages the link
 * extractor reads) with at least BC_SIMHASH_DEFAULT_MIN_SHINGLES shingles
 * of text; a shorter one is counted (too_short) and neither reported nor
 * indexed (simhash.c, WHAT IS LOST). A page whose payload is an identical
 * duplicate (IDENTICAL PAYLOADS) is not fingerprinted: it is reported
 * with duplicate_of only (its original was fingerprinted when fetched:
 * the first of a cluster, a near-duplicate, too short, or fetched with
 * near_dedup off; the copy joins none of those). The index keeps the first page of each cluster only: a page
 * near a near-duplicate but beyond k of the first page starts a cluster
 * of its own, so clusters do not drift. The simhash configuration is the
 * default (3-word shingles, seed 0) in every run: fingerprints of a state
 * compare with the resume's.
 * A page's own earlier fetch (a recrawl, --recrawl-after) is no copy of
 * it: a match naming the page's own URL is not reported, and nothing is
 * added (the first fetch's fingerprint stays).
 * near_mode BC_CRAWLER_NEAR_SKIP_LINKS: the links of a near-duplicate or
 * duplicate page (of another URL) are not admitted (counted in near_links_skipped): a
 * space of session IDs or calendar days, each page a copy of the first
 * with links to more copies, stops at the first copy. The links of the
 * first page of a cluster are admitted, so nothing it reaches is lost
 * that a copy would have reached through the same links.
 *
 * THE EMBEDDER'S WRITE ERRORS (bc_crawler_fail)
 * What on_page writes (crawl's --out record) belongs to the page's
 * transaction as the WARC records do: a callback that could not write it
 * calls bc_crawler_fail(), which is as sticky as a WARC error and
 * checked at the same points, so the page is never committed without
 * its record and the resume fetches it again.
 *
 * PER-HOST COUNTERS
 * Each page is also counted for its host (bc_crawler_hosts()): pages,
 * bytes, status classes, errors by kind, skipped types, the sum of
 * response times and a log-scale histogram of them for the 95th
 * percentile in 704 bytes a host (latency_int.h: within 6.25 %). They
 * live in a hash table keyed by the host's origin (the frontier's
 * job.origin), one entry per host with pages, about 1 KiB each. With a
 * crawl state the entries changed since the last commit are written with
 * it (host_stats, a blob of little-endian numbers: a format tag 1, pages,
 * bytes, skipped, the sum of ms, 6 status classes, the error kinds, then
 * the 176 histogram counts as 32-bit numbers) and read back on resume, so
 * they continue across runs like the other counters.
 *
 * CONTENT TYPES
 * With accept_types/reject_types, the fetcher's on_headers hook sees each
 * page's final response headers: a 2xx whose media type is refused stops
 * there (no body downloaded, so no links), and the page is reported with
 * skipped set. Its URL was admitted and went through the seen-test like
 * any other: it is not fetched again. robots.txt is never filtered.
 *
 * The crawler owns one allocation per transfer in flight, kept on a list
 * so that bc_crawler_free() releases the ones the fetcher abandons.
 */
#define _POSIX_C_SOURCE 200809L

#include "bloomcrawl/crawler.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define HASH_NONFATAL_OOM 1
#include <openssl/evp.h>
#include <uthash.h>

#include "bloomcrawl/robots.h"
#include "bloomcrawl/simhash.h"
#include "bloomcrawl/url.h"
#include "bc_buf.h"
#include "bc_clock.h"
#include "latency_int.h"
#include "payloads_int.h"
#include "state_int.h"
#include "validators_int.h"

/* Time between two snapshots of the seen-test with a crawl state. */
#define SNAPSHOT_MS 2000u

/* The longest a turn's commit waits with a crawl state (THE TURN'S
 * COMMIT): pages completed are committed within this time of the last
 * commit, and few free transfer slots wait at most this long to be
 * filled. */
#define COMMIT_HOLD_MS 10u

/* The most fingerprints the near-duplicate index is sized for (see
 * bc_crawler_create()). */
#define NEAR_EXPECTED_MAX 10000000u

/* The pause after a local failure, doubled for each one in a row up to
 * the maximum (LOCAL FAILURES). */
#define LOCAL_PAUSE_MS     100u
#define LOCAL_PAUSE_MAX_MS 1000u

/* ---- error kinds --------------------------------------------------------- */

/*
 * What a finished transfer's status says, in one switch over every status
 * (so that -Wswitch names a status added and not sorted here): its error
 * kind and its fault class (see the fault table below). Two classes
 * depend on more than the status, and bc_crawler_fault_of() decides them:
 * BC_OK's (by the HTTP status) and BC_ERR_FETCH_TLS's (transient with a
 * system errno).
 */
struct status_class {
    enum bc_crawler_error_kind kind;
    enum bc_fault fault;
};

static struct status_class classify(enum bc_status st)
{
    struct status_class c = {BC_CRAWLER_ERR_OTHER, BC_FAULT_PERMANENT};
    switch (st) {
    case BC_OK:
        c.fault = BC_FAULT_NONE;
        break;
    case BC_ERR_NOMEM:
    case BC_ERR_IO:
        c.fault = BC_FAULT_LOCAL;
        break;
    case BC_ERR_FETCH_TIMEOUT:
        c = (struct status_class){BC_CRAWLER_ERR_TIMEOUT, BC_FAULT_TRANSIENT};
        break;
    case BC_ERR_FETCH_TOO_SLOW:
        c = (struct status_class){BC_CRAWLER_ERR_TOO_SLOW, BC_FAULT_TRANSIENT};
        break;
    case BC_ERR_FETCH_CONNECT:
        c = (struct status_class){BC_CRAWLER_ERR_CONNECT, BC_FAULT_TRANSIENT};
        break;
    case BC_ERR_FETCH_DNS:
        c = (struct status_class){BC_CRAWLER_ERR_DNS, BC_FAULT_TRANSIENT};
        break;
    case BC_ERR_FETCH_NETWORK:
        c = (struct status_class){BC_CRAWLER_ERR_NETWORK, BC_FAULT_TRANSIENT};
        break;
    case BC_ERR_FETCH_TLS:
        c.kind = BC_CRAWLER_ERR_TLS;
        break;
    case BC_ERR_FETCH_TOO_LARGE:
    case BC_ERR_FETCH_HEADERS:
        c.kind = BC_CRAWLER_ERR_TOO_LARGE;
        break;
    case BC_ERR_FETCH_PROTOCOL:
        c.kind = BC_CRAWLER_ERR_PROTOCOL;
        break;
    case BC_ERR_INVALID_ARG:
    case BC_ERR_TOO_LARGE:
    case BC_ERR_FORMAT:
    case BC_ERR_VERSION:
    case BC_ERR_TRUNCATED:
    case BC_ERR_CHECKSUM:
    case BC_ERR_CORRUPT:
    case BC_ERR_NOT_FOUND:
    case BC_ERR_URL_EMPTY:
    case BC_ERR_URL_SCHEME:
    case BC_ERR_URL_NO_BASE:
    case BC_ERR_URL_HOST:
    case BC_ERR_URL_PORT:
    case BC_ERR_URL_IDN:
    case BC_ERR_URL_TOO_LONG:
    case BC_ERR_URL_IPV4:
    case BC_ERR_URL_IPV6:
    case BC_ERR_URL_BUFFER:
    case BC_ERR_FETCH_URL:
    case BC_ERR_FETCH_ABORTED:
    case BC_ERR_FETCH_OTHER:
    case BC_ERR_LOCKED:
    case BC_ERR_MISMATCH:
    case BC_ERR_REDIS_CONNECT:
    case BC_ERR_REDIS_LOST:
    case BC_ERR_REDIS_REPLY:
    case BC_ERR_UNSUPPORTED:
        break;
    }
    return c;
}

enum bc_crawler_error_kind bc_crawler_error_kind_of(enum bc_status st)
{
    return classify(st).kind;
}

#define KIND_NAME(name, text) [name] = text,
static const char *const error_kind_names[] = {
    BC_CRAWLER_ERROR_KIND_LIST(KIND_NAME)};
#undef KIND_NAME

const char *bc_crawler_error_kind_name(enum bc_crawler_error_kind kind)
{
    if ((unsigned)kind < BC_CRAWLER_ERR_KIND_COUNT)
        return error_kind_names[kind];
    return "unknown";
}

/*
 * The fault table (docs/DESIGN.md 3.4). Local: the system refused us a
 * resource (descriptors, memory, a local port for a connection:
 * EADDRNOTAVAIL, when the ephemeral ports are all in use or in
 * TIME_WAIT) or our own write failed, whatever the transfer's kind. Transient: the host or the network may answer later:
 * no connection (refused, reset, unreachable), a timeout or a stall, a
 * name that did not resolve (curl does not tell a temporary DNS failure
 * from a missing name; a missing one ends when its host is given up), an
 * empty or cut reply, a TLS handshake cut by the network (a system errno
 * with it; a certificate or cipher failure has none and is permanent),
 * and the answers that say "later": 408, 429, 500, 502, 503, 504 (and
 * 522, 524, the origin timeouts of proxies). Permanent: the rest of the
 * failures (a protocol violation, a body or header over its limit, a URL
 * curl refused, ...). Any other answer is the page's outcome (none).
 */
enum bc_fault bc_crawler_fault_of(enum bc_status status, int http_status,
                                  int os_errno)
{
    if (os_errno == EMFILE || os_errno == ENFILE || os_errno == ENOMEM ||
        os_errno == ENOBUFS || os_errno == EADDRNOTAVAIL)
        return BC_FAULT_LOCAL;
    if (status == BC_OK) {
        switch (http_status) {
        case 408:
        case 429:
        case 500:
        case 502:
        case 503:
        case 504:
        case 522:
        case 524:
            return BC_FAULT_TRANSIENT;
        default:
            return BC_FAULT_NONE;
        }
    }
    if (status == BC_ERR_FETCH_TLS && os_errno != 0)
        return BC_FAULT_TRANSIENT;
    return classify(status).fault;
}

/* ---- the crawler ----------------------------------------------------------- */

/* A page's links, buffered until its completion: records of a tag byte,
 * a size_t length and that many bytes. LINK_BASE sets the base of the
 * LINK_HREF records after it (written once per change of base). */
enum { LINK_BASE = 'B', LINK_HREF = 'L' };
#define LINK_HEADER (1 + sizeof(size_t))

/* One transfer in flight. */
struct transfer {
    struct transfer *prev, *next; /* the crawler's list of them */
    struct bc_frontier_job job;
    bool robots;
    struct bc_crawler *crawler; /* a sitemap's entries go to its frontier */
    struct bc_sitemap *sitemap; /* a sitemap's parser, or NULL */
    char *body; /* robots.txt body, up to BC_ROBOTS_MAX_BYTES + 1 */
    size_t body_len;
    char *base_raw, *base_url; /* a <base href> and its resolved URL */
    struct bc_buf links;       /* the buffered links (see LINK_BASE) */
    size_t base_at; /* offset of the last LINK_BASE record (SIZE_MAX: none) */
    uint64_t links_found, nofollow, links_nomem;
    /* Archiving (config.warc): see ARCHIVING above. */
    time_t fetched_at; /* wall clock when it was started */
    int64_t started_s; /* LASTMOD: the recrawl clock then, in seconds */
    struct bc_warc_record *rec; /* the response record, once the head came */
    char *req_head;             /* the request head as sent */
    size_t req_len;
    char req_id[BC_WARC_ID_SIZE], resp_id[BC_WARC_ID_SIZE];
    char ip[64];           /* the peer's address */
    const char *warc_file; /* where its response record went */
    uint64_t warc_offset;
    int local_errno; /* its WARC spool failed (a local failure), or 0 */
    /* Identical payloads (IDENTICAL PAYLOADS above): the payload's
     * length, its SHA-1 as it streams in when no WARC writer hashes it,
     * the digest once the page is whole (has_digest), and, for a payload
     * seen before, its first response (first) and whether this one was
     * archived as a revisit of it. */
    uint64_t payload_len;
    EVP_MD_CTX *payload_md;
    bool has_digest, duplicate, revisit;
    unsigned char digest[BC_PAYLOAD_DIGEST_SIZE];
    struct bc_payload_ref first;
    /* Conditional recrawls (CONDITIONAL RECRAWLS above): the request
     * carried the last 2xx fetch's validators, and that fetch's record
     * (id, "" when unknown; URI; date). */
    bool conditional;
    char last_id[BC_WARC_ID_SIZE];
    char *last_uri;
    time_t last_date;
    /* Near-duplicates (NEAR-DUPLICATES above): the page's simhash as its
     * text streams in (initialised for pages when config.near_dedup). */
    struct bc_simhash sh;
};

/* The counters of one host (PER-HOST COUNTERS). */
struct host_stats {
    UT_hash_handle hh;
    struct host_stats *next_dirty; /* changed since the last commit */
    bool dirty;
    uint64_t pages, bytes, skipped, ms_sum;
    uint64_t status_class[6];
    uint64_t errors[BC_CRAWLER_ERR_KIND_COUNT];
    struct bc_latency latency;
    size_t origin_len;
    char origin[]; /* the hash key */
};

struct bc_crawler {
    struct bc_frontier *frontier;
    struct bc_fetcher *fetcher;
    unsigned concurrency;
    uint64_t max_pages;
    uint64_t (*clock)(void *ctx);
    uint64_t (*recrawl_clock)(void *ctx); /* with recrawl_after_ms, or NULL */
    void (*on_page)(void *ctx, const struct bc_crawler_page *page);
    void (*on_fetch)(void *ctx, const struct bc_crawler_page *fetch);
    void *ctx;
    /* The shared page budget (config.page_budget) or NULL; the token it
     * granted and FETCH has not consumed yet; it said no: no more pages. */
    bool (*page_budget)(void *ctx, bool take);
    bool page_token, budget_spent;
    const char *const *accept_types, *const *reject_types;
    size_t accept_type_count, reject_type_count;
    struct host_stats *hosts;       /* by origin */
    struct host_stats *dirty_hosts; /* changed since the last commit */
    struct transfer *transfers;     /* in flight */
    struct bc_crawler_stats stats;
    bool stopping;
    bool paused;  /* bc_crawler_pause(): no job handed out */
    bool in_step; /* inside bc_crawler_step: step, run and free refused */
    struct bc_crawl_state *state; /* or NULL */
    enum bc_status state_status;  /* the first state error, sticky */
    uint64_t last_snapshot;       /* now_ms() of the last snapshot */
    struct bc_warc *warc;         /* or NULL */
    enum bc_status warc_status;   /* the first WARC error, sticky */
    int warc_errno;               /* errno after it */
    /* THE TURN'S COMMIT: now_ms() of the last commit, whether this
     * step's dispatch handed out a transfer, and the state's writes
     * (bc_crawl_state_writes()) when the last step returned. */
    uint64_t last_commit;
    bool handed;
    uint64_t state_writes;
    /* The embedder's failure (bc_crawler_fail()), sticky like the WARC's:
     * its status and errno. */
    enum bc_status fail_status;
    int fail_errno;
    /* Local failures (LOCAL FAILURES above): the intake (transfers let in
     * flight, AIMD), no start before pause_until, the pause now (0: no
     * local failure in a row), since when local failures go on without
     * a good completion (local_since, while local_run), the bound, and
     * the error once it is reached (sticky). */
    unsigned intake;
    uint64_t pause_until, pause_ms;
    uint64_t local_since;
    bool local_run;
    uint64_t local_wait_ms;
    enum bc_status local_status;
    uint64_t local_for_ms;
    /* The warc_* counters of the runs before (with a state). */
    uint64_t warc_files0, warc_records0, warc_bytes0;
    /* The index of payload digests (IDENTICAL PAYLOADS), or NULL when
     * config.payload_dedup is off. */
    struct bc_payloads *payloads;
    /* Conditional recrawls (CONDITIONAL RECRAWLS): on, and the
     * validators in memory (no state, a recrawl window) or NULL. */
    bool conditional;
    struct bc_validators *validators;
    /* The index of fingerprints (NEAR-DUPLICATES), or NULL when
     * config.near_dedup is off; the first pages' URLs, NUL-terminated, at
     * the offsets the index's ids give; what a near-duplicate's links
     * become. */
    struct bc_simhash_index *near;
    struct bc_buf near_urls;
    enum bc_crawler_near_mode near_mode;
    /* LASTMOD: a sitemap's newer <lastmod> makes a page due (a state, a
     * recrawl window and sitemaps); the <lastmod> of the entry being
     * admitted, for lastmod_due(). */
    bool lastmod;
    int64_t entry_lastmod;
};

static uint64_t monotonic_ms(void *ctx)
{
    (void)ctx;
    return bc_mono_ms();
}

static uint64_t now_ms(const struct bc_crawler *c)
{
    return c->clock(c->ctx);
}

static uint64_t realtime_ms(void *ctx)
{
    (void)ctx;
    return bc_wall_ms();
}

/* A recrawl window reads the time of each admission: set it before one. */
static void recrawl_tick(struct bc_crawler *c)
{
    if (c->recrawl_clock)
        bc_seen_set_clock(bc_frontier_seen(c->frontier),
                          c->recrawl_clock(c->ctx));
}

static void transfer_free(struct transfer *t)
{
    if (!t)
        return;
    bc_warc_record_abort(t->rec);
    EVP_MD_CTX_free(t->payload_md);
    free(t->last_uri);
    free(t->req_head);
    free(t->base_raw);
    free(t->base_url);
    free(t->body);
    bc_buf_free(&t->links);
    bc_sitemap_free(t->sitemap);
    free(t);
}

static void transfer_unlink(struct bc_crawler *c, struct transfer *t)
{
    if (t->prev)
        t->prev->next = t->next;
    else
        c->transfers = t->next;
    if (t->next)
        t->next->prev = t->prev;
}

/* ---- content types ---------------------------------------------------------- */

static bool is_token_char(char ch)
{
    return ch && (strchr("!#$%&'*+-.^_`|~", ch) || (ch >= '0' && ch <= '9') ||
                  (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'));
}

/* Token characters: how many at s. */
static size_t token_len(const char *s)
{
    size_t n = 0;
    while (is_token_char(s[n]))
        n++;
    return n;
}

bool bc_crawler_media_type_ok(const char *p)
{
    if (!p)
        return false;
    if (strcmp(p, "*") == 0)
        return true;
    size_t t = token_len(p);
    if (t == 0 || p[t] != '/' || (t == 1 && p[0] == '*'))
        return false;
    size_t sub = token_len(p + t + 1);
    return sub > 0 && p[t + 1 + sub] == '\0';
}

/* Does the media type mt (mt_len bytes, lower case) match pattern? */
static bool type_matches(const char *pattern, const char *mt, size_t mt_len)
{
    if (strcmp(pattern, "*") == 0)
        return true;
    size_t n = strlen(pattern);
    bool any_sub = n >= 2 && pattern[n - 1] == '*' && pattern[n - 2] == '/';
    size_t cmp = any_sub ? n - 1 : n; /* "text/" of a subtype "*" */
    if (any_sub ? mt_len < cmp : mt_len != cmp)
        return false;
    for (size_t i = 0; i < cmp; i++) {
        char ch = pattern[i];
        if (ch >= 'A' && ch <= 'Z')
            ch = (char)(ch - 'A' + 'a');
        if (ch != mt[i])
            return false;
    }
    return true;
}

/* Is a page of Content-Type ct (NULL: none) to be downloaded? */
static bool type_allowed(const struct bc_crawler *c, const char *ct)
{
    char mt[128];
    size_t n = 0;
    if (!ct)
        ct = "application/octet-stream";
    while (*ct == ' ' || *ct == '\t')
        ct++;
    for (; ct[n] && ct[n] != ';' && ct[n] != ' ' && ct[n] != '\t'; n++) {
        if (n == sizeof(mt) - 1)
            break; /* a type this long matches no pattern but "*" */
        char ch = ct[n];
        mt[n] = ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
    }
    mt[n] = '\0';
    bool ok = c->accept_type_count == 0;
    for (size_t i = 0; !ok && i < c->accept_type_count; i++)
        ok = type_matches(c->accept_types[i], mt, n);
    for (size_t i = 0; ok && i < c->reject_type_count; i++)
        ok = !type_matches(c->reject_types[i], mt, n);
    return ok;
}

/* ---- per-host counters ------------------------------------------------------- */

/* The counters of an origin, created when new; NULL when out of memory. */
static struct host_stats *host_stats_get(struct bc_crawler *c,
                                         const char *origin, size_t len)
{
    struct host_stats *h;
    HASH_FIND(hh, c->hosts, origin, len, h);
    if (h)
        return h;
    h = calloc(1, sizeof(*h) + len + 1);
    if (!h)
        return NULL;
    memcpy(h->origin, origin, len);
    h->origin_len = len;
    HASH_ADD_KEYPTR(hh, c->hosts, h->origin, len, h);
    if (h->hh.tbl == NULL) { /* uthash could not allocate its table */
        free(h);
        return NULL;
    }
    return h;
}

static void host_stats_dirty(struct bc_crawler *c, struct host_stats *h)
{
    if (h->dirty || !c->state)
        return;
    h->dirty = true;
    h->next_dirty = c->dirty_hosts;
    c->dirty_hosts = h;
}

/* The blob of a host's counters in the crawl state (PER-HOST COUNTERS). */
#define HOST_BLOB_U64 (5u + 6u + BC_CRAWLER_ERR_KIND_COUNT)
#define HOST_BLOB_LEN (8u * HOST_BLOB_U64 + 4u * BC_LATENCY_BUCKETS)

static void put_le(unsigned char *p, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void host_blob(const struct host_stats *h, unsigned char *b)
{
    uint64_t u[HOST_BLOB_U64] = {1, h->pages, h->bytes, h->skipped, h->ms_sum};
    memcpy(u + 5, h->status_class, sizeof(h->status_class));
    memcpy(u + 11, h->errors, sizeof(h->errors));
    for (unsigned i = 0; i < HOST_BLOB_U64; i++)
        put_le(b + 8 * i, u[i], 8);
    for (unsigned i = 0; i < BC_LATENCY_BUCKETS; i++)
        put_le(b + 8 * HOST_BLOB_U64 + 4 * i, h->latency.count[i], 4);
}

struct host_load {
    struct bc_crawler *c;
    enum bc_status st;
};

/* One host's blob from the state (one of another length or format tag is
 * ignored: its counters start again from 0). */
static void host_unblob(void *ctx, const char *origin, size_t len,
                        const void *data, size_t n)
{
    struct host_load *l = ctx;
    const unsigned char *b = data;
    if (n != HOST_BLOB_LEN || get_le(b, 8) != 1 || l->st != BC_OK)
        return;
    struct host_stats *h = host_stats_get(l->c, origin, len);
    if (!h) {
        l->st = BC_ERR_NOMEM;
        return;
    }
    uint64_t u[HOST_BLOB_U64];
    for (unsigned i = 0; i < HOST_BLOB_U64; i++)
        u[i] = get_le(b + 8 * i, 8);
    h->pages = u[1];
    h->bytes = u[2];
    h->skipped = u[3];
    h->ms_sum = u[4];
    memcpy(h->status_class, u + 5, sizeof(h->status_class));
    memcpy(h->errors, u + 11, sizeof(h->errors));
    for (unsigned i = 0; i < BC_LATENCY_BUCKETS; i++)
        h->latency.count[i] =
            (uint32_t)get_le(b + 8 * HOST_BLOB_U64 + 4 * i, 4);
}

/* Write the hosts changed since the last commit into the open
 * transaction. */
static enum bc_status host_stats_save(struct bc_crawler *c)
{
    unsigned char blob[HOST_BLOB_LEN];
    enum bc_status st = BC_OK;
    while (c->dirty_hosts && st == BC_OK) {
        struct host_stats *h = c->dirty_hosts;
        host_blob(h, blob);
        st = bc_crawl_state_host_stats_set(c->state, h->origin, h->origin_len,
                                           blob, sizeof(blob));
        c->dirty_hosts = h->next_dirty;
        h->next_dirty = NULL;
        h->dirty = false;
    }
    return st;
}

/* Count a finished page for its host. Out of memory, it is not counted
 * per host (the crawl's own counters have it). */
static void host_count_page(struct bc_crawler *c,
                            const struct bc_crawler_page *p)
{
    struct host_stats *h = host_stats_get(c, p->origin, p->origin_len);
    if (!h)
        return;
    h->pages++;
    h->bytes += p->bytes;
    h->ms_sum += p->ms;
    bc_latency_add(&h->latency, p->ms);
    if (p->skipped)
        h->skipped++;
    if (p->failed)
        h->errors[p->error_kind]++;
    else
        h->status_class[p->http_status / 100 < 6 ? p->http_status / 100 : 0]++;
    host_stats_dirty(c, h);
}

struct hosts_walk {
    const struct bc_crawler *c;
    void (*fn)(void *ctx, const struct bc_crawler_host *host);
    void *ctx;
};

static void host_of_frontier(void *ctx, const struct bc_frontier_host_info *i)
{
    struct hosts_walk *w = ctx;
    struct bc_crawler_host out;
    memset(&out, 0, sizeof(out));
    out.origin = i->origin;
    out.origin_len = i->origin_len;
    out.robots = i->robots;
    out.robots_fetching = i->robots_fetching;
    out.queued = i->queued;
    out.given_up = i->given_up;
    out.lost = i->lost;
    out.circuit = i->circuit;
    out.failures = i->failures;
    out.down = i->down;
    out.down_lost = i->down_lost;
    out.exhausted = i->exhausted;
    out.crawl_delay_ms = i->crawl_delay_ms;
    out.delay_ms = i->delay_ms;
    out.next_contact_ms = i->next_contact_ms;
    const struct host_stats *h;
    HASH_FIND(hh, w->c->hosts, i->origin, i->origin_len, h);
    if (h) {
        out.pages = h->pages;
        out.bytes = h->bytes;
        memcpy(out.status_class, h->status_class, sizeof(out.status_class));
        memcpy(out.errors, h->errors, sizeof(out.errors));
        out.skipped_content_type = h->skipped;
        out.ms_mean = h->pages ? (double)h->ms_sum / (double)h->pages : 0.0;
        out.ms_p95 = bc_latency_percentile(&h->latency, 95);
    }
    w->fn(w->ctx, &out);
}

size_t bc_crawler_hosts(const struct bc_crawler *c,
                        void (*fn)(void *ctx,
                                   const struct bc_crawler_host *host),
                        void *ctx)
{
    if (!c)
        return 0;
    struct hosts_walk w = {c, fn, ctx};
    return bc_frontier_hosts(c->frontier, fn ? host_of_frontier : NULL, &w);
}

/* ---- admission of discovered URLs ------------------------------------------ */

/* Is href an absolute URL (a scheme, or "//host")? */
static bool is_absolute(const char *href, size_t len)
{
    if (len >= 2 && href[0] == '/' && href[1] == '/')
        return true;
    for (size_t i = 0; i < len; i++) {
        char ch = href[i];
        if (ch == ':')
            return i > 0;
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              (i > 0 && ((ch >= '0' && ch <= '9') || ch == '+' || ch == '-' ||
                         ch == '.'))))
            return false;
    }
    return false;
}

static void count_bad_url(struct bc_crawler *c, enum bc_frontier_reason reason,
                          enum bc_status url_status)
{
    if (reason == BC_ADMIT_BAD_URL && url_status == BC_ERR_URL_SCHEME)
        c->stats.bad_scheme++;
    else if (reason == BC_ADMIT_BAD_URL)
        c->stats.bad_malformed++;
}

/*
 * Admit a link of the page of job (redirect false) or its redirect target
 * (redirect true); either keeps job's URL as its referrer. When the
 * seen-test recognizes it as an already seen URL although it was not
 * written in canonical form, it is a spelling merged by resolution and
 * normalization: counted apart (and among those, the absolute spellings).
 */
static enum bc_frontier_reason
admit(struct bc_crawler *c, const char *href, size_t len, const char *base,
      size_t base_len, const struct bc_frontier_job *job, bool redirect)
{
    enum bc_frontier_reason reason;
    enum bc_status ust = BC_OK;
    enum bc_status st =
        redirect ? bc_frontier_add_redirect(c->frontier, job, href, len, base,
                                            base_len, &reason, &ust)
                 : bc_frontier_add_link(c->frontier, job, href, len, base,
                                        base_len, &reason, &ust);
    if (st != BC_OK)
        return BC_ADMIT_NOMEM;
    count_bad_url(c, reason, ust);
    if (reason != BC_ADMIT_DUPLICATE && reason != BC_ADMIT_PROBABLY_SEEN)
        return reason;
    size_t clen;
    const char *canonical = bc_frontier_last_url(c->frontier, &clen);
    if (canonical && (clen != len || memcmp(canonical, href, len) != 0)) {
        c->stats.merged++;
        if (is_absolute(href, len))
            c->stats.merged_absolute++;
    }
    return reason;
}

/*
 * The base for links after a <base href>: its value resolved against the
 * page's URL (it may be relative), computed once per page. An unusable
 * <base href> is ignored, as browsers do: the page's URL stays the base.
 */
static void resolve_base(struct transfer *t, const char **base,
                         size_t *base_len)
{
    if (!t->base_raw || strlen(t->base_raw) != *base_len ||
        memcmp(t->base_raw, *base, *base_len) != 0) {
        char page_buf[BC_URL_MAX_LEN_DEFAULT + 1];
        char url_buf[BC_URL_MAX_LEN_DEFAULT + 1];
        struct bc_url page, url;
        free(t->base_raw);
        free(t->base_url);
        t->base_url = NULL;
        t->base_raw = strndup(*base, *base_len);
        if (bc_url_normalize(NULL, t->job.url, t->job.url_len, NULL, page_buf,
                             sizeof(page_buf), &page) == BC_OK &&
            bc_url_normalize(&page, *base, *base_len, NULL, url_buf,
                             sizeof(url_buf), &url) == BC_OK)
            t->base_url = strdup(url.href);
    }
    *base = t->base_url ? t->base_url : t->job.url;
    *base_len = strlen(*base);
}

/* Append a record to the links buffer, which has room for it (reserved:
 * the appends cannot fail). */
static void put_record(struct transfer *t, char tag, const char *s, size_t n)
{
    (void)bc_buf_putc(&t->links, tag);
    (void)bc_buf_append(&t->links, &n, sizeof(n));
    (void)bc_buf_append(&t->links, s, n);
}

/* Append a link (and its base, when it differs from the last one) to the
 * transfer's buffer, both or neither. false: no memory. */
static bool buffer_link(struct transfer *t, const char *href, size_t len,
                        const char *base, size_t base_len)
{
    bool same_base = false;
    if (t->base_at != SIZE_MAX) {
        size_t n;
        memcpy(&n, t->links.data + t->base_at + 1, sizeof(n));
        same_base =
            n == base_len &&
            memcmp(t->links.data + t->base_at + LINK_HEADER, base, n) == 0;
    }
    size_t need = LINK_HEADER + len + (same_base ? 0 : LINK_HEADER + base_len);
    if (bc_buf_reserve(&t->links, need) != BC_OK)
        return false;
    if (!same_base) {
        t->base_at = t->links.len;
        put_record(t, LINK_BASE, base, base_len);
    }
    put_record(t, LINK_HREF, href, len);
    return true;
}

/* The fetcher's link callback: buffer the link until the page is done. */
static void on_link(void *ctx, void *user, const char *href, size_t len,
                    const char *base, size_t base_len, unsigned flags)
{
    (void)ctx;
    struct transfer *t = user;
    t->links_found++;
    if (flags & (BC_LINK_NOFOLLOW | BC_LINK_PAGE_NOFOLLOW)) {
        t->nofollow++;
        return;
    }
    if (flags & BC_LINK_BASE_HREF)
        resolve_base(t, &base, &base_len);
    if (!buffer_link(t, href, len, base, base_len))
        t->links_nomem++;
}

/* Admit the buffered links of t, in document order, at depth + 1, with
 * the page as their referrer. */
static void admit_links(struct bc_crawler *c, const struct transfer *t)
{
    const char *base = t->job.url;
    size_t base_len = t->job.url_len;
    for (size_t at = 0; at < t->links.len;) {
        size_t n;
        memcpy(&n, t->links.data + at + 1, sizeof(n));
        const char *s = t->links.data + at + LINK_HEADER;
        if (t->links.data[at] == LINK_BASE)
            base = s, base_len = n;
        else
            admit(c, s, n, base, base_len, &t->job, false);
        at += LINK_HEADER + n;
    }
}

/* The fetcher's headers callback: a page's 2xx of a refused Content-Type
 * stops before its body (CONTENT TYPES); robots.txt and sitemaps pass. */
static bool on_headers(void *ctx, void *user, int http_status,
                       const char *content_type)
{
    const struct bc_crawler *c = ctx;
    const struct transfer *t = user;
    if (t->robots || t->job.action == BC_FRONTIER_FETCH_SITEMAP ||
        http_status < 200 || http_status > 299)
        return true;
    return type_allowed(c, content_type);
}

/* LASTMOD: the recrawl clock now, in seconds. */
static int64_t recrawl_now_s(struct bc_crawler *c)
{
    return (int64_t)(c->recrawl_clock(c->ctx) / 1000);
}

/* Stamp url's fetched row with time, in the turn's transaction (LASTMOD);
 * a state's failure is sticky. */
static void fetched_put(struct bc_crawler *c, const char *url, size_t len,
                        int64_t time)
{
    if (c->state_status != BC_OK)
        return;
    enum bc_status st = bc_crawl_state_fetched_put(c->state, url, len, time);
    if (st != BC_OK)
        c->state_status = st;
}

/* The frontier's question for a sitemap entry the seen-test calls seen
 * (bc_frontier_due_fn): due when its <lastmod> is later than the page's
 * last fetch (LASTMOD); then stamped as queued now and counted. */
static bool lastmod_due(void *ctx, const char *url, size_t len)
{
    struct bc_crawler *c = ctx;
    int64_t last;
    if (c->state_status != BC_OK)
        return false;
    enum bc_status st = bc_crawl_state_fetched_find(c->state, url, len, &last);
    if (st == BC_ERR_IO || st == BC_ERR_CORRUPT)
        c->state_status = st;
    if (st != BC_OK || c->entry_lastmod <= last)
        return false;
    fetched_put(c, url, len, recrawl_now_s(c));
    c->stats.lastmod_due++;
    return true;
}

/* A sitemap's entry, as it streams in: a page (urlset) is admitted at
 * depth 0 within the sitemap's scope (or, seen before, when its <lastmod>
 * makes it due: LASTMOD), a sitemap (index) queued. */
static void on_sitemap_entry(void *user, const struct bc_sitemap_entry *e)
{
    struct transfer *t = user;
    struct bc_crawler *c = t->crawler;
    recrawl_tick(c);
    if (e->kind == BC_SITEMAP_INDEX) {
        enum bc_frontier_sitemap_reason why;
        c->stats.sitemap_indexed++;
        (void)bc_frontier_add_sitemap(c->frontier, &t->job, e->loc, e->loc_len,
                                      &why);
        return;
    }
    enum bc_frontier_reason reason;
    enum bc_status ust = BC_OK;
    c->stats.sitemap_urls++;
    /* A <lastmod> in the future is ignored (LASTMOD). */
    bool due = c->lastmod && e->has_lastmod && e->lastmod <= recrawl_now_s(c);
    c->entry_lastmod = e->lastmod;
    if (bc_frontier_add_from_sitemap_due(c->frontier, &t->job, e->loc,
                                         e->loc_len, due ? lastmod_due : NULL,
                                         c, &reason, &ust) != BC_OK)
        reason = BC_ADMIT_NOMEM;
    if (reason == BC_ADMIT_QUEUED)
        c->stats.sitemap_admitted++;
    else
        c->stats.sitemap_rejected[reason]++;
}

static bool on_body(void *ctx, void *user, const void *data, size_t len)
{
    (void)ctx;
    struct transfer *t = user;
    if (t->sitemap) {
        /* Stop the transfer once the parser has stopped (a limit, an
         * entity bomb, malformed XML): the rest is never read. */
        (void)bc_sitemap_feed(t->sitemap, data, len);
        return bc_sitemap_stopped(t->sitemap) == BC_SITEMAP_STOP_NONE;
    }
    if (!t->robots)
        return true;
    size_t room = BC_ROBOTS_MAX_BYTES + 1 - t->body_len;
    memcpy(t->body + t->body_len, data, len < room ? len : room);
    t->body_len += len < room ? len : room;
    return true;
}

/* ---- archiving (config.warc) ------------------------------------------------ */

/* The first WARC error stops archiving; step and sync report it. */
static void warc_fail(struct bc_crawler *c, enum bc_status st)
{
    if (c->warc_status == BC_OK) {
        c->warc_status = st;
        c->warc_errno = errno;
    }
}

/* Copy a request head (n bytes) to out without its Proxy-Authorization
 * lines: the proxy's credentials are for the proxy, not the site, and
 * must not end up in an archive that is kept and shared. Returns the
 * length copied (at most n). */
static size_t copy_request_head(char *out, const char *h, size_t n)
{
    static const char name[] = "proxy-authorization:";
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        const char *eol = memchr(h + i, '\n', n - i);
        size_t len = eol ? (size_t)(eol - (h + i)) + 1 : n - i;
        bool drop = len >= sizeof(name) - 1;
        for (size_t j = 0; drop && j < sizeof(name) - 1; j++) {
            char c = h[i + j];
            drop = (c >= 'A' && c <= 'Z' ? (char)(c | 0x20) : c) == name[j];
        }
        if (!drop) {
            memcpy(out + k, h + i, len);
            k += len;
        }
        i += len;
    }
    return k;
}

/* A record's spool failed (not opened: EMFILE; or not written), or no
 * memory for it: a local failure of this transfer, not of the archive.
 * Its record is dropped, on_wire_body stops the transfer and on_done()
 * gives it back. Any other error (an argument the writer refused) is the
 * archive's, sticky as before. Call right after the failure: errno is
 * read. */
static void spool_fail(struct bc_crawler *c, struct transfer *t,
                       enum bc_status st)
{
    if (st != BC_ERR_NOMEM && st != BC_ERR_IO)
        warc_fail(c, st);
    else if (t->local_errno == 0)
        t->local_errno = st == BC_ERR_NOMEM ? ENOMEM : errno ? errno : EIO;
    bc_warc_record_abort(t->rec);
    t->rec = NULL;
}

/* The fetcher's wire callback: the final response's head came. Open the
 * response record (its body follows) and keep the request head for the
 * request record, written at completion (without Proxy-Authorization:
 * copy_request_head()). */
static void on_wire_head(void *ctx, void *user,
                         const struct bc_fetch_wire_head *h)
{
    struct bc_crawler *c = ctx;
    struct transfer *t = user;
    if (c->warc_status != BC_OK)
        return;
    snprintf(t->ip, sizeof(t->ip), "%s", h->ip);
    enum bc_status st = bc_warc_next_id(c->warc, t->req_id);
    if (st == BC_OK)
        st = bc_warc_next_id(c->warc, t->resp_id);
    if (st == BC_OK && !(t->req_head = malloc(h->request_len + 1)))
        st = BC_ERR_NOMEM;
    if (st == BC_OK) {
        t->req_len = copy_request_head(t->req_head, h->request, h->request_len);
        st =
            bc_warc_record_begin(c->warc, BC_WARC_RESPONSE, t->job.url, t->ip,
                                 t->fetched_at, t->resp_id, t->req_id, &t->rec);
    }
    if (st == BC_OK)
        st = bc_warc_record_head(t->rec, h->response, h->response_len);
    if (st == BC_OK) /* the payload comes apart (on_wire_payload) */
        st = bc_warc_record_payload(t->rec, NULL, 0, false);
    if (st != BC_OK)
        spool_fail(c, t, st);
}

/* The fetcher's wire callback: body bytes as received, into the record's
 * spool. */
static bool on_wire_body(void *ctx, void *user, const void *data, size_t len)
{
    struct bc_crawler *c = ctx;
    struct transfer *t = user;
    if (t->local_errno)
        return false; /* its spool failed: stop, it is given back */
    if (t->rec && c->warc_status == BC_OK) {
        enum bc_status st = bc_warc_record_body(t->rec, data, len);
        if (st != BC_OK) {
            spool_fail(c, t, st);
            return t->local_errno == 0; /* a local one: stop */
        }
    }
    return true;
}

/* The fetcher's wire callback: the payload (the body without its chunk
 * framing, decoded once, by the fetcher), for the payload digest: the
 * WARC record's, or the crawler's own without a writer. */
static bool on_wire_payload(void *ctx, void *user, const void *data, size_t len,
                            bool end)
{
    struct bc_crawler *c = ctx;
    struct transfer *t = user;
    t->payload_len += len;
    if (c->payloads && !c->warc && len > 0 && !t->robots && !t->sitemap) {
        /* No writer hashes the payload: the crawler does, in the same
         * pass, for pages (IDENTICAL PAYLOADS). No memory for the context
         * is a local failure: the page is fetched again later. */
        if (!t->payload_md &&
            (!(t->payload_md = EVP_MD_CTX_new()) ||
             EVP_DigestInit_ex(t->payload_md, EVP_sha1(), NULL) != 1)) {
            t->local_errno = ENOMEM;
            return false;
        }
        EVP_DigestUpdate(t->payload_md, data, len);
    }
    if (t->rec && c->warc_status == BC_OK) {
        enum bc_status st = bc_warc_record_payload(t->rec, data, len, end);
        if (st != BC_OK) {
            warc_fail(c, st); /* the writer refused an argument: a bug */
            bc_warc_record_abort(t->rec);
            t->rec = NULL;
        }
    }
    return true;
}

/* A transfer finished: write its request and response records, or drop
 * the response record of a failed one (a body cut by max_body_bytes is
 * kept, marked truncated, as is robots.txt's cut). Returns 0, or the
 * errno of a local failure before anything was written (the request
 * record's spool: the transfer is then given back, LOCAL FAILURES). */
static int warc_complete(struct bc_crawler *c, struct transfer *t,
                         const struct bc_fetch_result *r)
{
    struct bc_warc_record *resp = t->rec;
    t->rec = NULL;
    if (!resp)
        return 0;
    /* Cut on purpose: a body over max_body_bytes, or a sitemap its parser
     * stopped (a limit, a DOCTYPE, malformed XML) - an answer that came,
     * archived as far as it was read. Marked truncated only if its body
     * was not read whole: the writer tells by the response's framing (a
     * small sitemap stopped on its last bytes is whole: warc.h). */
    bool cut = r->status == BC_ERR_FETCH_TOO_LARGE ||
               (r->status == BC_ERR_FETCH_ABORTED && t->sitemap &&
                bc_sitemap_stopped(t->sitemap) != BC_SITEMAP_STOP_NONE);
    if ((r->status != BC_OK && !cut) || c->warc_status != BC_OK) {
        bc_warc_record_abort(resp);
        return 0;
    }
    struct bc_warc_record *req = NULL;
    enum bc_status st =
        bc_warc_record_begin(c->warc, BC_WARC_REQUEST, t->job.url, t->ip,
                             t->fetched_at, t->req_id, t->resp_id, &req);
    if (st == BC_OK)
        st = bc_warc_record_head(req, t->req_head, t->req_len);
    if (st == BC_ERR_NOMEM || st == BC_ERR_IO) {
        /* Its spool: a local failure, nothing written to the file yet. */
        int err = st == BC_ERR_NOMEM ? ENOMEM : errno ? errno : EIO;
        bc_warc_record_abort(req);
        bc_warc_record_abort(resp);
        return err;
    }
    if (st != BC_OK) {
        warc_fail(c, st); /* first: errno is the failure's */
        bc_warc_record_abort(req);
        bc_warc_record_abort(resp);
        return 0;
    }
    st = bc_warc_record_end(req, false, NULL, NULL);
    if (st != BC_OK) {
        warc_fail(c, st); /* first: errno is the failed write's */
        bc_warc_record_abort(resp);
        return 0;
    }
    if (t->conditional && r->http_status == 304) {
        /* Unchanged since the last fetch: a revisit naming its record. */
        struct bc_warc_refers of = {t->last_id, t->last_uri, t->last_date};
        st = bc_warc_record_end_not_modified(resp, &of, &t->warc_file,
                                             &t->warc_offset);
        if (st == BC_ERR_INVALID_ARG) /* refused, left open: a bug */
            bc_warc_record_abort(resp);
    } else if (t->duplicate && t->first.id[0]) {
        /* Archived before: a revisit record naming the original. */
        struct bc_warc_refers of = {t->first.id, t->first.url, t->first.date};
        st = bc_warc_record_end_revisit(resp, &of, &t->warc_file,
                                        &t->warc_offset);
        if (st == BC_ERR_INVALID_ARG) /* refused, left open: a bug */
            bc_warc_record_abort(resp);
        t->revisit = st == BC_OK;
    } else {
        st = bc_warc_record_end(resp, cut || r->truncated, &t->warc_file,
                                &t->warc_offset);
    }
    if (st != BC_OK) {
        t->warc_file = NULL;
        t->warc_offset = 0;
        warc_fail(c, st);
    }
    return 0;
}

/* The warc_* counters: the runs before and this writer's. */
static void warc_counters(const struct bc_crawler *c,
                          struct bc_crawler_stats *s)
{
    struct bc_warc_stats ws;
    bc_warc_stats(c->warc, &ws);
    s->warc_files = c->warc_files0 + ws.files;
    s->warc_records = c->warc_records0 + ws.records;
    s->warc_bytes = c->warc_bytes0 + ws.bytes;
}

enum bc_status bc_crawler_warc_error(const struct bc_crawler *c, int *err_no)
{
    if (err_no)
        *err_no = c ? c->warc_errno : 0;
    return c ? c->warc_status : BC_OK;
}

/* ---- identical payloads (IDENTICAL PAYLOADS above) ----------------------- */

/* Whether a finished transfer's payload is indexed: a page's whole 2xx
 * response with at least one payload byte (IDENTICAL PAYLOADS says why
 * the others are not). */
static bool payload_indexed(const struct bc_crawler *c,
                            const struct transfer *t,
                            const struct bc_fetch_result *r)
{
    return c->payloads && !t->robots && !t->sitemap && r->status == BC_OK &&
           !r->truncated && !r->skipped && r->http_status >= 200 &&
           r->http_status <= 299 && t->payload_len > 0;
}

/* A transfer finished with a response: its payload's digest (the WARC
 * record's, or the crawler's own), and whether the index has it. Before
 * its records are written: a payload seen before is a revisit. No
 * digest (no memory to copy the writer's SHA-1 state) leaves the page
 * unindexed, archived whole: nothing lost, nothing claimed. */
static void payload_lookup(struct bc_crawler *c, struct transfer *t,
                           const struct bc_fetch_result *r)
{
    if (!payload_indexed(c, t, r))
        return;
    if (c->warc) {
        if (!t->rec || c->warc_status != BC_OK ||
            bc_warc_record_payload_sha1(t->rec, t->digest) != BC_OK)
            return;
    } else {
        unsigned int n = 0;
        if (!t->payload_md ||
            EVP_DigestFinal_ex(t->payload_md, t->digest, &n) != 1 ||
            n != BC_PAYLOAD_DIGEST_SIZE)
            return;
    }
    t->has_digest = true;
    t->duplicate = bc_payloads_find(c->payloads, t->digest, &t->first);
}

/* With a state: write digest's row of the index in the open transaction,
 * with its page (a failure is sticky, as page_done's). */
static void payload_put(struct bc_crawler *c, const unsigned char *digest,
                        const struct bc_payload_ref *ref)
{
    if (!c->state || c->state_status != BC_OK)
        return;
    struct bc_crawl_state_payload row = {
        .digest = digest,
        .url = ref->url,
        .url_len = strlen(ref->url),
        .record_id = ref->id,
        .date = (int64_t)ref->date,
    };
    enum bc_status st = bc_crawl_state_payload_put(c->state, &row);
    if (st != BC_OK)
        c->state_status = st;
}

/* A page with a final outcome and a digest: a duplicate is counted and
 * named in its report; a new payload enters the index (in memory, and in
 * the state with its page). An entry first indexed without a WARC record
 * gets the first record written for it. */
static void payload_done(struct bc_crawler *c, struct transfer *t,
                         struct bc_crawler_page *page)
{
    if (!t->has_digest)
        return;
    const char *id = t->warc_file ? t->resp_id : "";
    if (t->duplicate && strcmp(t->first.url, t->job.url) == 0) {
        /* A recrawl whose payload is its own last fetch's: unchanged,
         * not a duplicate of another page (as a near-duplicate is never
         * its own). Its revisit record, if any, names that fetch. */
        c->stats.unchanged++;
        page->unchanged = true;
        return;
    }
    if (t->duplicate) {
        c->stats.duplicates++;
        if (t->revisit || !c->warc)
            c->stats.duplicate_bytes += t->payload_len;
        page->duplicate_of = t->first.url;
        page->duplicate_of_len = strlen(t->first.url);
        if (!t->first.id[0] && *id &&
            bc_payloads_set_record(c->payloads, t->digest, id, t->fetched_at) ==
                BC_OK) {
            struct bc_payload_ref ref;
            (void)bc_payloads_find(c->payloads, t->digest, &ref);
            payload_put(c, t->digest, &ref);
        }
        return;
    }
    if (c->warc && !*id)
        return; /* its record failed: the crawl stops before a commit */
    /* No memory for the entry: the page stays unindexed (a later copy is
     * archived whole), counted; the state's row still makes a resume
     * index it. */
    if (bc_payloads_add(c->payloads, t->digest, t->job.url, t->job.url_len, id,
                        t->fetched_at) != BC_OK)
        c->stats.dedup_unindexed++;
    struct bc_payload_ref ref = {t->job.url, id, t->fetched_at};
    payload_put(c, t->digest, &ref);
}

/* The state's payload rows into the index, on resume, in the order they
 * were put: a digest's later row is its entry gaining its record. */
static enum bc_status payload_load_row(void *ctx,
                                       const struct bc_crawl_state_payload *p)
{
    struct bc_crawler *c = ctx;
    struct bc_payload_ref ref;
    if (bc_payloads_find(c->payloads, p->digest, &ref))
        return p->record_id[0]
                   ? bc_payloads_set_record(c->payloads, p->digest,
                                            p->record_id, (time_t)p->date)
                   : BC_OK;
    return bc_payloads_add(c->payloads, p->digest, p->url, p->url_len,
                           p->record_id, (time_t)p->date);
}

/* ---- conditional recrawls (CONDITIONAL RECRAWLS above) ------------------- */

/* A validators row found for a transfer: its request's header lines. */
struct conditional_req {
    struct transfer *t;
    char *lines[2];
    size_t n;
};

/* Make "name: value" into q's next line; false when out of memory. */
static bool conditional_line(struct conditional_req *q, const char *name,
                             const char *value)
{
    size_t len = strlen(name) + 2 + strlen(value) + 1;
    char *line = malloc(len);
    if (!line)
        return false;
    snprintf(line, len, "%s: %s", name, value);
    q->lines[q->n++] = line;
    return true;
}

static enum bc_status conditional_row(void *ctx,
                                      const struct bc_crawl_state_validators *v)
{
    struct conditional_req *q = ctx;
    struct transfer *t = q->t;
    if (!*v->etag && !*v->last_modified)
        return BC_ERR_NOT_FOUND; /* emptied by a 2xx without them */
    if (strlen(v->record_id) >= sizeof(t->last_id))
        return BC_ERR_NOT_FOUND; /* not a record id of ours */
    if ((*v->etag && !conditional_line(q, "If-None-Match", v->etag)) ||
        (*v->last_modified &&
         !conditional_line(q, "If-Modified-Since", v->last_modified)) ||
        !(t->last_uri = strdup(v->record_uri)))
        return BC_ERR_NOMEM;
    memcpy(t->last_id, v->record_id, strlen(v->record_id) + 1);
    t->last_date = (time_t)v->date;
    return BC_OK;
}

/* A page's fetch: the header lines of its conditional request into q
 * (q->n 0: an unconditional one) when its URL has validators. No memory
 * for them is an unconditional fetch: nothing lost. A state's read
 * error is sticky, as a write's. */
static void conditional_lookup(struct bc_crawler *c, struct transfer *t,
                               struct conditional_req *q)
{
    q->t = t;
    q->n = 0;
    if (!c->conditional || t->robots || t->sitemap)
        return;
    enum bc_status st = BC_ERR_NOT_FOUND;
    if (c->state && c->state_status == BC_OK)
        st = bc_crawl_state_validators_find(c->state, t->job.url,
                                            t->job.url_len, conditional_row, q);
    else if (c->validators)
        st = bc_validators_find(c->validators, t->job.url, t->job.url_len,
                                conditional_row, q);
    if (st == BC_OK) {
        t->conditional = true;
        return;
    }
    if (st == BC_ERR_IO || st == BC_ERR_CORRUPT)
        c->state_status = st;
    for (size_t i = 0; i < q->n; i++)
        free(q->lines[i]);
    q->n = 0;
    free(t->last_uri);
    t->last_uri = NULL;
}

/* Write a validators row: in the state's transaction, or in memory. A
 * state's failure is sticky (as page_done's); no memory leaves the URL
 * without a row (its next fetch is unconditional). */
static void validators_put(struct bc_crawler *c,
                           const struct bc_crawl_state_validators *v)
{
    if (c->state) {
        if (c->state_status != BC_OK)
            return;
        enum bc_status st = bc_crawl_state_validators_put(c->state, v);
        if (st != BC_OK)
            c->state_status = st;
    } else if (c->validators) {
        (void)bc_validators_put(c->validators, v);
    }
}

/* A page with a final outcome: a 304 to its conditional request is
 * reported and counted as not modified (its row kept); a whole 2xx keeps
 * its validators for the next recrawl, with the record that holds its
 * payload (its own response, or the original its revisit names); a 2xx
 * without them empties a row the URL had. */
static void conditional_done(struct bc_crawler *c, struct transfer *t,
                             const struct bc_fetch_result *r,
                             struct bc_crawler_page *page)
{
    if (!c->conditional || page->failed || r->status != BC_OK)
        return;
    if (t->conditional && r->http_status == 304) {
        page->not_modified = true;
        c->stats.not_modified++;
        return;
    }
    if (r->http_status < 200 || r->http_status > 299 || r->truncated ||
        r->skipped || (!r->etag && !r->last_modified && !t->conditional))
        return;
    if (c->warc && !t->warc_file)
        return; /* its record failed: the crawl stops before a commit */
    struct bc_crawl_state_validators v = {
        .url = t->job.url,
        .url_len = t->job.url_len,
        .etag = r->etag ? r->etag : "",
        .last_modified = r->last_modified ? r->last_modified : "",
        .record_id = t->warc_file ? t->resp_id : "",
        .record_uri = t->job.url,
        .date = (int64_t)t->fetched_at,
    };
    if (t->revisit) {
        v.record_id = t->first.id;
        v.record_uri = t->first.url;
        v.date = (int64_t)t->first.date;
    }
    validators_put(c, &v);
}

/* A page with a final outcome (LASTMOD): a whole 2xx or a 304 is a fetch
 * of the page as it is now, its fetched row the time it was started. */
static void lastmod_done(struct bc_crawler *c, struct transfer *t,
                         const struct bc_fetch_result *r,
                         const struct bc_crawler_page *page)
{
    if (!c->lastmod || page->failed || r->status != BC_OK || r->truncated ||
        r->skipped ||
        !(r->http_status == 304 ||
          (r->http_status >= 200 && r->http_status <= 299)))
        return;
    fetched_put(c, t->job.url, t->job.url_len, t->started_s);
}

/* ---- near-duplicates (NEAR-DUPLICATES above) ------------------------------ */

/* The fetcher's text callback: the page's visible text, run by run. */
static void on_text(void *ctx, void *user, const char *text, size_t len)
{
    (void)ctx;
    struct transfer *t = user;
    bc_simhash_feed_text(&t->sh, text, len);
}

/* Whether Content-Type ct names HTML, as the fetcher's extractor takes
 * it (text/html or application/xhtml+xml, any case, parameters after). */
static bool html_type(const char *ct)
{
    if (!ct)
        return false;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    size_t n = strcspn(ct, "; \t");
    return (n == 9 && !strncasecmp(ct, "text/html", 9)) ||
           (n == 21 && !strncasecmp(ct, "application/xhtml+xml", 21));
}

/* Add fp as the first page of a cluster at URL (in memory, and with a
 * state in the open transaction); id is where the URL goes in near_urls.
 * BC_OK or BC_ERR_NOMEM (the index and near_urls unchanged). */
static enum bc_status near_add(struct bc_crawler *c, uint64_t fp,
                               const char *url, size_t url_len)
{
    size_t id = c->near_urls.len;
    enum bc_status st = bc_buf_append(&c->near_urls, url, url_len);
    if (st == BC_OK)
        st = bc_buf_putc(&c->near_urls, '\0');
    if (st == BC_OK)
        st = bc_simhash_index_add(c->near, fp, id);
    if (st != BC_OK)
        bc_buf_truncate(&c->near_urls, id);
    return st;
}

/* A page with a final outcome, before its links are admitted: its
 * fingerprint, if it has one, looked up among the earlier pages'. A
 * near-duplicate is counted and named in its report; a new one starts a
 * cluster (its row written in the state with its page). No memory for
 * the entry leaves the page unindexed (a later copy is not reported),
 * counted in dedup_unindexed; its row is still written, so that a resume
 * indexes it. */
static void near_check(struct bc_crawler *c, struct transfer *t,
                       const struct bc_fetch_result *r,
                       struct bc_crawler_page *page)
{
    if (!c->near || t->duplicate || r->status != BC_OK || r->truncated ||
        r->skipped || r->http_status < 200 || r->http_status > 299 ||
        !html_type(r->content_type))
        return;
    uint64_t fp;
    if (!bc_simhash_final(&t->sh, &fp)) {
        c->stats.too_short++;
        return;
    }
    struct bc_simhash_match m;
    if (bc_simhash_index_query(c->near, fp, &m, NULL)) {
        const char *first = c->near_urls.data + m.id;
        if (strlen(first) == t->job.url_len &&
            !memcmp(first, t->job.url, t->job.url_len))
            return; /* its own earlier fetch (a recrawl): no copy */
        c->stats.near_duplicates++;
        page->near_duplicate_of = first;
        page->near_duplicate_of_len = strlen(page->near_duplicate_of);
        page->near_distance = m.distance;
        return;
    }
    if (near_add(c, fp, t->job.url, t->job.url_len) != BC_OK)
        c->stats.dedup_unindexed++;
    if (!c->state || c->state_status != BC_OK)
        return;
    struct bc_crawl_state_fingerprint row = {fp, t->job.url, t->job.url_len};
    enum bc_status st = bc_crawl_state_fingerprint_put(c->state, &row);
    if (st != BC_OK)
        c->state_status = st;
}

/* Whether t's payload is an earlier page's under another URL: an
 * identical duplicate of its own earlier fetch (a recrawl of a page that
 * did not change) is no copy, and skip-links admits its links. */
static bool copy_of_other(const struct transfer *t)
{
    return t->duplicate && (strlen(t->first.url) != t->job.url_len ||
                            memcmp(t->first.url, t->job.url, t->job.url_len));
}

/* The state's fingerprint rows into the index, on resume. */
static enum bc_status near_load_row(void *ctx,
                                    const struct bc_crawl_state_fingerprint *f)
{
    return near_add(ctx, f->fp, f->url, f->url_len);
}

/* ---- local failures (LOCAL FAILURES above) --------------------------------- */

const char *bc_crawler_resource_name(int err_no)
{
    switch (err_no) {
    case EMFILE:
        return "file descriptors";
    case ENFILE:
        return "the system's open file table";
    case ENOMEM:
        return "memory";
    case ENOBUFS:
        return "network buffer space";
    case EADDRNOTAVAIL:
        return "local ports";
    case ENOSPC:
    case EDQUOT:
        return "disk space";
    default:
        return "a local resource";
    }
}

/* A local failure (errno err) at now: counted, the intake halved and a
 * pause begun once per pause (a burst of them from one fetcher run is one
 * event, as TCP cuts its window once per loss event), the pause doubled
 * for each one in a row; past local_wait_ms of them without a good
 * completion, the local error is set (sticky: every step returns it). */
static void local_failure(struct bc_crawler *c, int err, uint64_t now)
{
    c->stats.local_failures++;
    c->stats.local_errno = err;
    if (now >= c->pause_until) {
        c->intake = c->intake > 1 ? c->intake / 2 : 1;
        c->pause_ms = c->pause_ms == 0 ? LOCAL_PAUSE_MS
                      : c->pause_ms >= LOCAL_PAUSE_MAX_MS / 2
                          ? LOCAL_PAUSE_MAX_MS
                          : c->pause_ms * 2;
        c->pause_until = now + c->pause_ms;
    }
    if (!c->local_run) {
        c->local_run = true;
        c->local_since = now;
    } else if (c->local_wait_ms && c->local_status == BC_OK &&
               now - c->local_since >= c->local_wait_ms) {
        c->local_status =
            err == ENOMEM || err == ENOBUFS ? BC_ERR_NOMEM : BC_ERR_IO;
        c->local_for_ms = now - c->local_since;
    }
}

/* A transfer completed without a local failure: one more in flight may
 * be let in (up to concurrency), and the run of local failures is over. */
static void local_ok(struct bc_crawler *c)
{
    if (c->intake < c->concurrency)
        c->intake++;
    c->pause_ms = 0;
    c->local_run = false;
}

/* Give a job back after a local failure: fetched again later, never its
 * page's outcome. The frontier out of memory loses the URL (counted
 * under BC_ADMIT_NOMEM; with a state it stays in flight there and is
 * fetched on resume); a store error is the step's (commit_state()). */
static void give_back(struct bc_crawler *c, struct bc_frontier_job *job,
                      int err, uint64_t now)
{
    (void)bc_frontier_giveback(c->frontier, job, now);
    local_failure(c, err, now);
}

enum bc_status bc_crawler_local_error(const struct bc_crawler *c, int *err_no,
                                      uint64_t *for_ms)
{
    if (err_no)
        *err_no = c && c->local_status != BC_OK ? c->stats.local_errno : 0;
    if (for_ms)
        *for_ms = c ? c->local_for_ms : 0;
    return c ? c->local_status : BC_OK;
}

/* ---- completion ------------------------------------------------------------- */

/* With a state: the FETCH job id is fetched (in the open transaction,
 * with the page's links). A URL queued again for a retry is the
 * frontier's. */
static void page_done(struct bc_crawler *c, uint64_t id)
{
    if (!c->state || c->state_status != BC_OK || id == 0)
        return;
    enum bc_status st = bc_crawl_state_page_done(c->state, id);
    if (st != BC_OK)
        c->state_status = st;
}

/* With a state: the FETCH job id ended on a transient fault with no retry
 * left (or its host down): done, and kept for crawl --retry-failed. */
static void page_failed(struct bc_crawler *c, uint64_t id)
{
    if (!c->state || c->state_status != BC_OK || id == 0)
        return;
    enum bc_status st = bc_crawl_state_page_failed(c->state, id);
    if (st != BC_OK)
        c->state_status = st;
}

/* What every finished transfer reports (on_page, on_fetch): its URL,
 * host, the fetcher's result, the WARC record; failed with the kind and
 * text of a fetch error. The rest (depth, links, referrer, ...) is the
 * page's: 0 and NULL here. */
static void fetch_report(const struct transfer *t,
                         const struct bc_fetch_result *r,
                         enum bc_crawler_fetch_kind kind,
                         struct bc_crawler_page *out)
{
    *out = (struct bc_crawler_page){
        .url = t->job.url,
        .url_len = t->job.url_len,
        .status = r->status,
        .http_status = r->http_status,
        .content_type = r->content_type,
        .bytes = r->body_bytes,
        .ms = r->time_ms,
        .location = r->location,
        .location_len = r->location ? r->location_len : 0,
        .failed = r->status != BC_OK,
        .error_text = r->status != BC_OK ? r->error : "",
        .kind = kind,
        .origin = t->job.origin,
        .origin_len = t->job.origin_len,
        .fetched_at = t->fetched_at,
        .warc_file = t->warc_file,
        .warc_offset = t->warc_file ? t->warc_offset : 0,
    };
    if (out->failed)
        out->error_kind = bc_crawler_error_kind_of(r->status);
}

/* on_fetch for a transfer that is not a page (robots.txt, a sitemap):
 * the page struct with depth 0, no referrer, no links. */
static void report_fetch(struct bc_crawler *c, const struct transfer *t,
                         const struct bc_fetch_result *r,
                         enum bc_crawler_fetch_kind kind)
{
    if (!c->on_fetch)
        return;
    struct bc_crawler_page fetch;
    fetch_report(t, r, kind, &fetch);
    c->on_fetch(c->ctx, &fetch);
}

/* A robots.txt transfer finished. Only a file read in full, or up to its
 * 500 KiB limit (bc_fetcher_add_truncated), counts as an answer; any
 * failure is "unreachable" (status 0), never "allow all". */
static void complete_robots(struct bc_crawler *c, struct transfer *t,
                            const struct bc_fetch_result *r, uint64_t now)
{
    int status = r->status == BC_OK ? r->http_status : 0;
    report_fetch(c, t, r, BC_CRAWLER_FETCH_ROBOTS);
    bc_frontier_robots_done(
        c->frontier, &t->job, status, t->body,
        t->body_len > BC_ROBOTS_MAX_BYTES ? BC_ROBOTS_MAX_BYTES : t->body_len,
        r->location, r->location_len, now);
}

/* A sitemap transfer finished: a 2xx body read to its end is parsed to
 * its end; one the parser stopped is counted by the parser's reason. */
static void complete_sitemap(struct bc_crawler *c, struct transfer *t,
                             const struct bc_fetch_result *r, uint64_t now)
{
    struct bc_crawler_stats *s = &c->stats;
    bool ok2xx = r->http_status >= 200 && r->http_status <= 299;
    if (r->status == BC_OK && ok2xx)
        (void)bc_sitemap_finish(t->sitemap);
    enum bc_sitemap_stop stop = bc_sitemap_stopped(t->sitemap);
    if (ok2xx && (r->status == BC_OK || stop != BC_SITEMAP_STOP_NONE))
        s->sitemaps_fetched++;
    else if (r->status != BC_OK)
        s->sitemap_errors[bc_crawler_error_kind_of(r->status)]++;
    else {
        s->sitemap_http_errors++;
        if (r->http_status == 404 || r->http_status == 410)
            s->sitemap_not_found++;
    }
    if (stop != BC_SITEMAP_STOP_NONE)
        s->sitemap_cut[stop]++;
    /* A sitemap the parser cut was answered: on_fetch sees the answer
     * (the cut is counted above), not the abort that ended the read. */
    struct bc_fetch_result shown = *r;
    if (stop != BC_SITEMAP_STOP_NONE && r->status == BC_ERR_FETCH_ABORTED) {
        shown.status = BC_OK;
        shown.error = "";
    }
    report_fetch(c, t, &shown, BC_CRAWLER_FETCH_SITEMAP);
    struct bc_frontier_outcome o = {
        .http_status = r->status == BC_OK ? r->http_status : 0,
        .response_ms = r->time_ms,
        .retry_after_ms = r->has_retry_after ? r->retry_after_ms : 0,
        .fault = bc_crawler_fault_of(
            shown.status, r->status == BC_OK ? r->http_status : 0, r->os_errno),
    };
    bc_frontier_sitemap_done(c->frontier, &t->job, &o, now);
}

/*
 * A page finished: the one place where a page's outcome and the URLs it
 * leads to (its links, its redirect target) enter the frontier, in this
 * order: frontier.done() (which decides, from the fault, whether the URL
 * is retried), then for a final outcome its links, redirect target,
 * counters, on_page and on_fetch; an attempt queued again for a retry is
 * only an on_fetch (retry set): one on_page per URL, its final outcome.
 * job.url stays valid after done() until the next next().
 */
static void complete_page(struct bc_crawler *c, struct transfer *t,
                          const struct bc_fetch_result *r, uint64_t now)
{
    struct bc_crawler_stats *s = &c->stats;
    struct bc_crawler_page page;
    fetch_report(t, r, BC_CRAWLER_FETCH_PAGE, &page);
    page.depth = t->job.depth;
    page.redirects = t->job.redirects;
    page.retries = t->job.retries;
    page.referrer = t->job.referrer;
    page.referrer_len = t->job.referrer_len;
    page.skipped = r->status == BC_OK && r->skipped;
    page.fault = bc_crawler_fault_of(
        r->status, r->status == BC_OK ? r->http_status : 0, r->os_errno);

    struct bc_frontier_outcome o = {
        .http_status = r->status == BC_OK ? r->http_status : 0,
        .response_ms = r->time_ms,
        .retry_after_ms = r->has_retry_after ? r->retry_after_ms : 0,
        .fault = page.fault,
    };
    uint64_t id = t->job.id;
    bc_frontier_done(c->frontier, &t->job, &o, now);
    if (t->job.requeued) {
        /* Not its outcome: the URL comes back after retry_at_ms. As for
         * a job given back, max_pages and the shared budget count the
         * page once, when its outcome comes (a resume counts it so). */
        s->retried++;
        s->handed_out--;
        if (c->page_budget)
            (void)c->page_budget(c->ctx, false);
        page.retry = true;
        page.retry_at_ms = t->job.retry_at_ms;
        if (c->on_fetch)
            c->on_fetch(c->ctx, &page);
        return;
    }

    near_check(c, t, r, &page);
    if (c->near_mode == BC_CRAWLER_NEAR_SKIP_LINKS &&
        (page.near_duplicate_of || copy_of_other(t))) {
        /* A copy's links: not admitted (NEAR-DUPLICATES). */
        page.near_links_skipped = t->links_found - t->nofollow - t->links_nomem;
        s->near_links_skipped += page.near_links_skipped;
    } else {
        admit_links(c, t);
    }
    s->links += t->links_found;
    s->nofollow_skipped += t->nofollow;
    s->links_nomem += t->links_nomem;
    s->pages++;
    s->bytes += r->body_bytes;
    page.links = t->links_found;
    if (r->status == BC_OK && r->location && r->http_status >= 300 &&
        r->http_status < 400) {
        /* A redirect target is a discovered URL like any link, at the
         * depth of the page that redirected, one hop further in its
         * chain: beyond max_redirects hops it is an error. */
        s->redirects++;
        if (admit(c, r->location, r->location_len, r->location_base,
                  strlen(r->location_base), &t->job,
                  true) == BC_ADMIT_TOO_MANY_REDIRECTS) {
            page.failed = true;
            page.error_kind = BC_CRAWLER_ERR_TOO_MANY_REDIRECTS;
            page.error_text = "redirect chain longer than max_redirects";
            page.fault = BC_FAULT_PERMANENT;
        }
    }
    if (page.failed)
        s->errors[page.error_kind]++;
    else
        s->status_class[r->http_status / 100 < 6 ? r->http_status / 100 : 0]++;
    if (page.skipped)
        s->skipped_content_type++;
    if (page.fault == BC_FAULT_TRANSIENT)
        s->transient_given_up++;
    payload_done(c, t, &page);
    conditional_done(c, t, r, &page);
    lastmod_done(c, t, r, &page);
    host_count_page(c, &page);
    if (c->on_page)
        c->on_page(c->ctx, &page);
    if (c->on_fetch)
        c->on_fetch(c->ctx, &page);
    if (page.fault == BC_FAULT_TRANSIENT)
        page_failed(c, id);
    else
        page_done(c, id);
}

/* The fetcher's completion callback. */
static void on_done(void *ctx, const struct bc_fetch_result *r)
{
    struct bc_crawler *c = ctx;
    struct transfer *t = r->user;
    uint64_t now = now_ms(c);
    recrawl_tick(c);
    transfer_unlink(c, t);
    /* A local failure (its spool, or the machine's: the one table) is
     * given back, whatever the transfer's kind (LOCAL FAILURES). */
    int local = t->local_errno;
    if (!local && bc_crawler_fault_of(r->status, r->http_status, r->os_errno) ==
                      BC_FAULT_LOCAL)
        local = r->os_errno                 ? r->os_errno
                : r->status == BC_ERR_NOMEM ? ENOMEM
                                            : EIO;
    if (!local) {
        payload_lookup(c, t, r);
        local = warc_complete(c, t, r);
    }
    if (local) {
        if (t->job.action == BC_FRONTIER_FETCH) {
            /* As if not handed out: max_pages and the shared budget
             * count it when it is fetched. */
            c->stats.handed_out--;
            if (c->page_budget)
                (void)c->page_budget(c->ctx, false);
        }
        give_back(c, &t->job, local, now);
        transfer_free(t);
        return;
    }
    local_ok(c);
    if (t->robots)
        complete_robots(c, t, r, now);
    else if (t->sitemap)
        complete_sitemap(c, t, r, now);
    else
        complete_page(c, t, r, now);
    transfer_free(t);
}

/* ---- the crawl state ------------------------------------------------------- */

/* URLs handed to route(): the frontier counts them (its reason
 * BC_ADMIT_ROUTED, whatever the add call: seeds, links, redirects,
 * sitemap entries, revisits). O(1). */
static uint64_t routed_out(const struct bc_crawler *c)
{
    struct bc_frontier_stats fs;
    bc_frontier_counters(c->frontier, &fs);
    return fs.reasons[BC_ADMIT_ROUTED];
}

/* The loop's TOTAL counters as the state keeps them: every element of
 * every TOTAL row of bc_crawler_counter_table(), under its key
 * ("crawler.pages", "crawler.errors.timeout"; bc_counter_key()). */
static enum bc_status counters_save(struct bc_crawler *c)
{
    warc_counters(c, &c->stats);
    c->stats.routed_out = routed_out(c);
    size_t n;
    const struct bc_counter *t = bc_crawler_counter_table(&n);
    return bc_crawl_state_save_totals(c->state, "crawler", t, n, &c->stats);
}

/* The counters of the runs before: the pages in flight at the last commit
 * were not completed, and are handed out again: handed_out restarts from
 * the pages completed, so that max_pages counts each page once. */
static void counters_load(struct bc_crawler *c)
{
    size_t n;
    const struct bc_counter *t = bc_crawler_counter_table(&n);
    bc_crawl_state_load_totals(c->state, "crawler", t, n, &c->stats);
    c->stats.handed_out = c->stats.pages + c->stats.not_started;
    c->warc_files0 = c->stats.warc_files;
    c->warc_records0 = c->stats.warc_records;
    c->warc_bytes0 = c->stats.warc_bytes;
}

/* Commit the turn (when the frontier wrote anything); a failure is
 * sticky. */
static enum bc_status commit_state(struct bc_crawler *c, uint64_t now)
{
    if (!c->state)
        return BC_OK;
    if (c->state_status == BC_OK)
        c->state_status = bc_frontier_store_status(c->frontier);
    if (c->state_status != BC_OK)
        return c->state_status;
    if (c->warc_status != BC_OK)
        return c->warc_status; /* the turn's records failed: not committed */
    if (c->fail_status != BC_OK)
        return c->fail_status; /* the embedder lost a page: not committed */
    if (c->warc) {
        struct bc_warc_position at;
        bc_warc_tell(c->warc, &at);
        bc_crawl_state_set_warc(c->state, &at);
    }
    if (!bc_crawl_state_pending(c->state))
        return BC_OK;
    enum bc_status st = counters_save(c);
    if (st == BC_OK)
        st = host_stats_save(c);
    if (st == BC_OK)
        st = bc_crawl_state_commit(c->state, c->frontier);
    c->last_commit = now;
    if (st == BC_OK && now - c->last_snapshot >= SNAPSHOT_MS) {
        st = bc_crawl_state_snapshot(c->state, c->frontier);
        c->last_snapshot = now;
    }
    c->state_status = st;
    return st;
}

/* Commit and snapshot, whatever the time. */
static enum bc_status sync_state(struct bc_crawler *c, uint64_t now)
{
    if (!c->state)
        return BC_OK;
    enum bc_status st = commit_state(c, now);
    if (st == BC_OK && now != c->last_snapshot) {
        st = bc_crawl_state_snapshot(c->state, c->frontier);
        c->last_snapshot = now;
        c->state_status = st;
    }
    return st;
}

/* ---- the loop ------------------------------------------------------------- */

/* Start the transfer of a FETCH or FETCH_ROBOTS job; false if it could
 * not be started (then the frontier has been told it failed). */
static bool start(struct bc_crawler *c, const struct bc_frontier_job *job,
                  uint64_t now)
{
    bool robots = job->action == BC_FRONTIER_FETCH_ROBOTS;
    bool sitemap = job->action == BC_FRONTIER_FETCH_SITEMAP;
    struct transfer *t = calloc(1, sizeof(*t));
    if (t && robots && !(t->body = malloc(BC_ROBOTS_MAX_BYTES + 1))) {
        free(t);
        t = NULL;
    }
    if (t && sitemap) {
        struct bc_sitemap_config sc;
        bc_sitemap_config_init(&sc);
        sc.on_entry = on_sitemap_entry;
        sc.user = t;
        if (bc_sitemap_create(&sc, &t->sitemap) != BC_OK) {
            free(t);
            t = NULL;
        }
    }
    enum bc_status st = BC_ERR_NOMEM;
    if (t) {
        t->job = *job;
        t->robots = robots;
        t->crawler = c;
        t->base_at = SIZE_MAX;
        bc_buf_init(&t->links, 0);
        t->fetched_at = time(NULL);
        if (c->lastmod)
            t->started_s = recrawl_now_s(c);
        if (c->near && !robots && !sitemap)
            (void)bc_simhash_init(&t->sh, NULL); /* the defaults: BC_OK */
        if (robots)
            st = bc_fetcher_add_truncated(c->fetcher, job->url, job->url_len,
                                          BC_FETCH_NO_LINKS,
                                          BC_ROBOTS_MAX_BYTES, t);
        else if (sitemap) /* the parser stops it at 50 MiB of XML */
            st =
                bc_fetcher_add_truncated(c->fetcher, job->url, job->url_len,
                                         BC_FETCH_NO_LINKS | BC_FETCH_BODY_2XX,
                                         (uint64_t)BC_SITEMAP_MAX_BYTES + 1, t);
        else {
            struct conditional_req q;
            conditional_lookup(c, t, &q);
            st = bc_fetcher_add_with_headers(c->fetcher, job->url, job->url_len,
                                             0, (const char *const *)q.lines,
                                             q.n, t);
            if (st == BC_ERR_INVALID_ARG && q.n > 0) {
                /* A row's value no request line can carry (the fetcher
                 * keeps none such: a state written by other hands): the
                 * page is fetched whole, not failed. */
                t->conditional = false;
                st = bc_fetcher_add(c->fetcher, job->url, job->url_len, 0, t);
            }
            for (size_t i = 0; i < q.n; i++)
                free(q.lines[i]);
            if (st == BC_OK && t->conditional)
                c->stats.conditional_requests++;
        }
    }
    if (st == BC_ERR_NOMEM) {
        /* No memory to start it: a local failure, the job goes back. */
        struct bc_frontier_job back = *job;
        transfer_free(t);
        give_back(c, &back, ENOMEM, now);
        return false;
    }
    if (st != BC_OK) {
        /* Could not start (a URL curl cannot take): the frontier sees a
         * failed transfer. */
        struct bc_frontier_job failed = *job;
        c->stats.not_started++;
        if (sitemap) {
            struct bc_frontier_outcome o = {0, 0, 0, BC_FAULT_NONE};
            bc_frontier_sitemap_done(c->frontier, &failed, &o, now);
        } else if (robots) {
            bc_frontier_robots_done(c->frontier, &failed, 0, NULL, 0, NULL, 0,
                                    now);
        } else {
            struct bc_frontier_outcome o = {0, 0, 0, BC_FAULT_NONE};
            bc_frontier_done(c->frontier, &failed, &o, now);
            page_done(c, job->id);
        }
        transfer_free(t);
        return false;
    }
    t->next = c->transfers;
    if (t->next)
        t->next->prev = t;
    c->transfers = t;
    return true;
}

/* Whether this turn hands nothing out (THE TURN'S COMMIT): with a state,
 * while transfers are in flight, fewer than half the slots are free and
 * the last commit is under COMMIT_HOLD_MS old, the free slots wait for the
 * next turn, so that one commit covers the jobs of several turns; never
 * when others wrote to the state since the last step or the crawl is
 * stopping. */
static bool hold_dispatch(const struct bc_crawler *c, uint64_t now,
                          bool outside)
{
    if (!c->state || outside || c->stopping)
        return false;
    size_t busy = bc_fetcher_in_flight(c->fetcher);
    size_t free_slots = c->intake > busy ? c->intake - busy : 0;
    return busy > 0 && 2 * free_slots < c->intake &&
           now - c->last_commit < COMMIT_HOLD_MS;
}

/* Hand out jobs until the fetcher is full, the frontier says wait, the
 * crawl is stopped or the page limit is reached. Returns the time to wake
 * up at (0: none); *over: the crawl is over. */
static uint64_t dispatch(struct bc_crawler *c, uint64_t now, bool *over)
{
    *over = false;
    c->budget_spent = false; /* a refusal holds for this step: ask again */
    while (bc_fetcher_in_flight(c->fetcher) < c->intake) {
        if (c->page_budget && !c->page_token && !c->budget_spent &&
            !c->stopping &&
            !(c->max_pages && c->stats.handed_out >= c->max_pages)) {
            c->page_token = c->page_budget(c->ctx, true);
            c->budget_spent = !c->page_token;
        }
        if (c->stopping || c->budget_spent ||
            (c->max_pages && c->stats.handed_out >= c->max_pages)) {
            if (c->page_token) { /* stopped: no page will use it */
                (void)c->page_budget(c->ctx, false);
                c->page_token = false;
            }
            *over = bc_fetcher_in_flight(c->fetcher) == 0;
            return 0;
        }
        if (now < c->pause_until || c->local_status != BC_OK)
            return c->pause_until; /* after a local failure: a pause */
        if (c->paused)
            return 0; /* bc_crawler_pause(): until resumed */
        struct bc_frontier_job job;
        if (bc_frontier_next(c->frontier, now, &job) != BC_OK) {
            if (bc_frontier_store_status(c->frontier) != BC_OK)
                return 0;     /* the state failed: step reports it */
            return now + 100; /* out of memory: try again shortly */
        }
        switch (job.action) {
        case BC_FRONTIER_DONE:
            if (c->page_token) { /* not needed: back to the others */
                (void)c->page_budget(c->ctx, false);
                c->page_token = false;
            }
            *over = bc_fetcher_in_flight(c->fetcher) == 0;
            return 0;
        case BC_FRONTIER_WAIT:
            return job.wait_until_ms == UINT64_MAX ? 0 : job.wait_until_ms;
        case BC_FRONTIER_DROP:
            if (job.reason == BC_ADMIT_HOST_GIVEN_UP)
                c->stats.given_up_dropped++;
            else if (job.reason == BC_ADMIT_HOST_DOWN)
                c->stats.host_down_dropped++;
            else
                c->stats.dropped++;
            continue;
        case BC_FRONTIER_FETCH:
        case BC_FRONTIER_FETCH_ROBOTS:
        case BC_FRONTIER_FETCH_SITEMAP:
            break;
        }
        c->handed = true; /* its transfer may start: commit first (I4) */
        if (!start(c, &job, now))
            continue;
        if (job.action == BC_FRONTIER_FETCH_ROBOTS)
            c->stats.robots_fetched++;
        else if (job.action == BC_FRONTIER_FETCH_SITEMAP)
            c->stats.sitemaps_started++;
        else {
            c->stats.handed_out++;
            c->page_token = false; /* consumed by a page that started */
        }
    }
    return 0;
}

enum bc_status bc_crawler_step(struct bc_crawler *c, uint64_t timeout_ms,
                               bool *done)
{
    if (!c || c->in_step)
        return BC_ERR_INVALID_ARG;
    if (c->state_status != BC_OK)
        return c->state_status;
    if (c->warc_status != BC_OK)
        return c->warc_status;
    if (c->fail_status != BC_OK)
        return c->fail_status;
    if (c->local_status != BC_OK)
        return c->local_status;
    c->in_step = true;
    bool over = false;
    uint64_t now = now_ms(c);
    /* Written by others since the last step (seeds, routed URLs): this
     * step commits (THE TURN'S COMMIT). */
    bool outside =
        c->state && bc_crawl_state_writes(c->state) != c->state_writes;
    recrawl_tick(c);
    bool hold = hold_dispatch(c, now, outside);
    uint64_t wake = 0;
    c->handed = false;
    if (!hold)
        wake = dispatch(c, now, &over);
    /* With a state: commit the jobs just handed out (with the pages of
     * the last turns) before their transfers start; at the end, sync. */
    enum bc_status st = BC_OK;
    if (over)
        st = sync_state(c, now);
    else if (c->handed || outside || now - c->last_commit >= COMMIT_HOLD_MS)
        st = commit_state(c, now);
    if (st != BC_OK) {
        c->in_step = false;
        return st;
    }
    /* The free slots are filled, and what is not committed is, by the
     * hold's end at the latest. */
    if (hold || (c->state && !over && bc_crawl_state_pending(c->state))) {
        uint64_t end = c->last_commit + COMMIT_HOLD_MS;
        if (!wake || wake > end)
            wake = end;
    }
    if (!over) {
        uint64_t timeout = timeout_ms;
        if (wake > now && wake - now < timeout)
            timeout = wake - now;
        if (wake && wake <= now)
            timeout = 0;
        if (bc_fetcher_in_flight(c->fetcher) == 0) {
            /* Only politeness to wait for (the fetcher would return at
             * once): sleep; a signal ends the sleep early. */
            if (timeout > 0) {
                struct timespec ts = {(time_t)(timeout / 1000),
                                      (long)(timeout % 1000) * 1000000L};
                nanosleep(&ts, NULL);
            }
        } else {
            st = bc_fetcher_run(c->fetcher, timeout);
            if (st == BC_ERR_NOMEM) { /* curl's multi handle: local */
                local_failure(c, ENOMEM, now_ms(c));
                st = BC_OK;
            }
        }
    }
    if (st == BC_OK && c->warc_status != BC_OK)
        st = c->warc_status;
    if (st == BC_OK && c->fail_status != BC_OK)
        st = c->fail_status;
    if (st == BC_OK && c->local_status != BC_OK)
        st = c->local_status;
    if (c->state)
        c->state_writes = bc_crawl_state_writes(c->state);
    c->in_step = false;
    if (done)
        *done = over;
    return st;
}

enum bc_status bc_crawler_sync(struct bc_crawler *c)
{
    if (!c || c->in_step)
        return BC_ERR_INVALID_ARG;
    if (c->warc_status != BC_OK)
        return c->warc_status;
    if (c->fail_status != BC_OK)
        return c->fail_status;
    return sync_state(c, now_ms(c));
}

/*
 * The embedder's failure. A callback that could not keep what it was
 * given (crawl's --out record, cut short by a full disk) must stop the
 * crawl before the page it lost is committed: the page's completion is
 * in the state's open transaction, which the next step would commit, and
 * a committed page is never fetched again. So the failure is sticky and
 * checked where the WARC's is: at the top of every step, after the
 * fetcher's run (the step whose callback failed returns it), and in
 * commit_state() and sync. The open transaction is never committed; the
 * state resumes from the last commit and fetches the lost pages again.
 */
enum bc_status bc_crawler_fail(struct bc_crawler *c, enum bc_status status,
                               int err_no)
{
    if (!c || status == BC_OK)
        return BC_ERR_INVALID_ARG;
    if (c->fail_status == BC_OK) { /* the first failure is the cause */
        c->fail_status = status;
        c->fail_errno = err_no;
    }
    return BC_OK;
}

enum bc_status bc_crawler_failure(const struct bc_crawler *c, int *err_no)
{
    if (err_no)
        *err_no = c ? c->fail_errno : 0;
    return c ? c->fail_status : BC_OK;
}

enum bc_status bc_crawler_run(struct bc_crawler *c)
{
    bool done = false;
    while (!done) {
        enum bc_status st = bc_crawler_step(c, 1000, &done);
        if (st != BC_OK)
            return st;
    }
    return BC_OK;
}

void bc_crawler_stop(struct bc_crawler *c)
{
    if (c)
        c->stopping = true;
}

void bc_crawler_pause(struct bc_crawler *c, bool paused)
{
    if (c)
        c->paused = paused;
}

enum bc_status bc_crawler_wakeup(struct bc_crawler *c)
{
    if (!c)
        return BC_ERR_INVALID_ARG;
    return bc_fetcher_wakeup(c->fetcher);
}

/* ---- create, free, seeds, stats ------------------------------------------- */

static void hosts_free(struct bc_crawler *c)
{
    struct host_stats *h, *tmp;
    HASH_ITER(hh, c->hosts, h, tmp)
    {
        HASH_DEL(c->hosts, h);
        free(h);
    }
}

void bc_crawler_config_init(struct bc_crawler_config *config)
{
    if (!config)
        return;
    memset(config, 0, sizeof(*config));
    bc_frontier_config_init(&config->frontier);
    bc_fetcher_config_init(&config->fetcher);
    config->concurrency = BC_CRAWLER_DEFAULT_CONCURRENCY;
    config->local_wait_ms = BC_CRAWLER_DEFAULT_LOCAL_WAIT_MS;
    config->near_k = BC_SIMHASH_DEFAULT_K;
}

/*
 * PINNED SETTINGS. A resumed crawl continues the one in its state: its
 * seen-test was sized by expected, fp_rate, layout and lru_capacity (a
 * snapshot of other sizing cannot be loaded, and a changed LRU or window
 * changes what is a duplicate), its queue was admitted under scope,
 * include and exclude, and its hosts were asked for robots.txt and
 * sitemaps as user_agent, obey_robots and sitemaps said: a change would
 * make one crawl of two rule sets, so it is refused, naming the setting.
 * The names are crawl's options, which states written before the library
 * pinned them also hold: such a state resumes with its settings checked.
 * A setting off ("") is stored as no row, so a state from before a pin
 * existed resumes as it was (recrawl_after_ms).
 */
enum { PIN_COUNT = 11 };

struct pins {
    struct bc_crawl_state_option opt[PIN_COUNT];
    char expect[24], fp_rate[32], lru[24], recrawl[32];
    struct bc_buf include, exclude;
};

/* Join a pattern list with spaces into b (data NULL when empty). */
static enum bc_status join_patterns(struct bc_buf *b, const char *const *list,
                                    size_t n)
{
    enum bc_status st = BC_OK;
    for (size_t i = 0; st == BC_OK && i < n; i++) {
        if (i)
            st = bc_buf_putc(b, ' ');
        if (st == BC_OK)
            st = bc_buf_puts(b, list[i] ? list[i] : "");
    }
    return st;
}

/* The pinned settings of config, as strings (free with pins_free()). */
static enum bc_status pins_of(const struct bc_crawler_config *config,
                              struct pins *p)
{
    const struct bc_frontier_config *f = &config->frontier;
    bc_buf_init(&p->include, 0);
    bc_buf_init(&p->exclude, 0);
    enum bc_status st =
        join_patterns(&p->include, f->include, f->include_count);
    if (st == BC_OK)
        st = join_patterns(&p->exclude, f->exclude, f->exclude_count);
    if (st != BC_OK)
        return st;
    snprintf(p->expect, sizeof(p->expect), "%llu",
             (unsigned long long)f->seen.expected);
    /* %.17g: every double prints as the one it is read back as. */
    snprintf(p->fp_rate, sizeof(p->fp_rate), "%.17g", f->seen.fp_rate);
    snprintf(p->lru, sizeof(p->lru), "%llu",
             (unsigned long long)f->seen.lru_capacity);
    p->recrawl[0] = '\0';
    if (config->recrawl_after_ms)
        snprintf(p->recrawl, sizeof(p->recrawl), "%llums",
                 (unsigned long long)config->recrawl_after_ms);
    const char *scope = f->scope == BC_SCOPE_HOST     ? "host"
                        : f->scope == BC_SCOPE_DOMAIN ? "domain"
                                                      : "any";
    const struct bc_crawl_state_option opt[PIN_COUNT] = {
        {"--scope", scope},
        {"--include", p->include.data ? p->include.data : ""},
        {"--exclude", p->exclude.data ? p->exclude.data : ""},
        {"--expect", p->expect},
        {"--fp-rate", p->fp_rate},
        {"--layout",
         f->seen.kind == BC_SEEN_BLOOM_CLASSIC ? "classic" : "blocked"},
        {"--lru", p->lru},
        {"--user-agent", f->user_agent ? f->user_agent : ""},
        {"--no-robots", f->obey_robots ? "no" : "yes"},
        {"--sitemaps", f->sitemaps ? "yes" : "no"},
        {"--recrawl-after", p->recrawl},
    };
    memcpy(p->opt, opt, sizeof(opt));
    return BC_OK;
}

static void pins_free(struct pins *p)
{
    bc_buf_free(&p->include);
    bc_buf_free(&p->exclude);
}

enum bc_status bc_crawler_pin(const struct bc_crawler_config *config,
                              struct bc_crawl_state_error *err)
{
    if (err)
        memset(err, 0, sizeof(*err));
    if (!config || !config->state)
        return BC_ERR_INVALID_ARG;
    struct pins p;
    enum bc_status st = pins_of(config, &p);
    if (st == BC_OK)
        st = bc_crawl_state_pin(config->state, p.opt, PIN_COUNT, err);
    pins_free(&p);
    return st;
}

/* Whether config is one bc_crawler_create() takes (crawler.h): the
 * fetcher's callbacks and ctx are left to the crawler, a type list with a
 * count has its array, and each of its entries is a media type. */
static bool config_ok(const struct bc_crawler_config *config)
{
    if (config->concurrency == 0 || config->fetcher.on_done ||
        config->fetcher.on_link || config->fetcher.on_text ||
        config->fetcher.on_body || config->fetcher.on_headers ||
        config->fetcher.on_wire_head || config->fetcher.on_wire_body ||
        config->fetcher.on_wire_payload || config->fetcher.ctx ||
        (config->accept_type_count && !config->accept_types) ||
        (config->reject_type_count && !config->reject_types))
        return false;
    for (size_t i = 0; i < config->accept_type_count; i++)
        if (!bc_crawler_media_type_ok(config->accept_types[i]))
            return false;
    for (size_t i = 0; i < config->reject_type_count; i++)
        if (!bc_crawler_media_type_ok(config->reject_types[i]))
            return false;
    return true;
}

/* The crawler's copy of config's limits, callbacks and borrowed handles
 * (the state, the WARC writer, the type lists: the caller's, kept alive
 * by it). */
static void settings_copy(struct bc_crawler *c,
                          const struct bc_crawler_config *config)
{
    c->concurrency = config->concurrency;
    c->intake = config->concurrency;
    c->local_wait_ms = config->local_wait_ms;
    c->max_pages = config->max_pages;
    c->clock = config->clock ? config->clock : monotonic_ms;
    c->on_page = config->on_page;
    c->on_fetch = config->on_fetch;
    c->ctx = config->ctx;
    c->page_budget = config->page_budget;
    c->accept_types = config->accept_types;
    c->accept_type_count = config->accept_type_count;
    c->reject_types = config->reject_types;
    c->reject_type_count = config->reject_type_count;
    c->state = config->state;
    c->warc = config->warc;
}

/* The frontier's config: config->frontier, and for a crawl with
 * recrawl_after_ms a seen-test that is a time window of that length (c's
 * recrawl clock set, and the state told its time). */
static struct bc_frontier_config
frontier_config_of(struct bc_crawler *c, const struct bc_crawler_config *config)
{
    struct bc_frontier_config fc = config->frontier;
    if (!config->recrawl_after_ms)
        return fc;
    c->recrawl_clock =
        config->recrawl_clock ? config->recrawl_clock : realtime_ms;
    fc.seen.kind = BC_SEEN_WINDOW_TIME;
    fc.seen.window = config->recrawl_after_ms;
    /* A crawl admits in bursts (a run admits its URLs within hours of
     * a week's window): each generation (window / (G - 1)) is sized
     * for all of frontier.seen.expected, so the window for (G - 1)
     * times as many (window.h sizes a time window for capacity keys
     * spread over it). */
    unsigned g = fc.seen.window_generations ? fc.seen.window_generations
                                            : BC_WINDOW_DEFAULT_GENERATIONS;
    fc.seen.expected = fc.seen.expected > UINT64_MAX / (g - 1)
                           ? UINT64_MAX
                           : fc.seen.expected * (g - 1);
    if (c->state)
        bc_crawl_state_set_seen_clock(c->state, c->recrawl_clock(c->ctx));
    return fc;
}

/* Build c's frontier: a new one, or with a crawl state the one it saved,
 * with the crawler's counters and per-host stats as the state has them.
 * On failure c has no frontier and no host stats. */
static enum bc_status frontier_open(struct bc_crawler *c,
                                    const struct bc_crawler_config *config)
{
    struct bc_frontier_config fc = frontier_config_of(c, config);
    enum bc_status st =
        c->state
            ? bc_crawl_state_frontier(c->state, &fc, 0, now_ms(c), &c->frontier)
            : bc_frontier_create(&fc, &c->frontier);
    if (st != BC_OK || !c->state)
        return st;
    counters_load(c);
    struct host_load l = {c, BC_OK};
    st = bc_crawl_state_host_stats(c->state, host_unblob, &l);
    if (st == BC_OK)
        st = l.st;
    if (st != BC_OK)
        goto out_free_frontier;
    c->last_snapshot = now_ms(c);
    return BC_OK;

out_free_frontier:
    hosts_free(c);
    bc_frontier_free(c->frontier);
    c->frontier = NULL;
    return st;
}

/* The fetcher's config: config->fetcher with the crawler's callbacks (the
 * WARC's wire callbacks only with a WARC writer, the payload's also with
 * payload_dedup, on_headers only with a type list) and the frontier's
 * user agent when it names none. */
static struct bc_fetcher_config
fetcher_config_of(struct bc_crawler *c, const struct bc_crawler_config *config)
{
    struct bc_fetcher_config xc = config->fetcher;
    if (!xc.user_agent || !*xc.user_agent)
        xc.user_agent = config->frontier.user_agent;
    xc.on_done = on_done;
    xc.on_link = on_link;
    xc.on_body = on_body;
    if (c->warc) {
        xc.on_wire_head = on_wire_head;
        xc.on_wire_body = on_wire_body;
    }
    if (c->warc || c->payloads)
        xc.on_wire_payload = on_wire_payload;
    if (c->near)
        xc.on_text = on_text;
    if (c->accept_type_count || c->reject_type_count)
        xc.on_headers = on_headers;
    xc.ctx = c;
    return xc;
}

enum bc_status bc_crawler_create(const struct bc_crawler_config *config,
                                 struct bc_crawler **out)
{
    if (!config || !out || !config_ok(config))
        return BC_ERR_INVALID_ARG;
    /* Before anything is built: a changed pinned setting is refused
     * (the state's message names it). */
    if (config->state) {
        enum bc_status pst = bc_crawler_pin(config, NULL);
        if (pst != BC_OK)
            return pst;
    }
    struct bc_crawler *c = calloc(1, sizeof(*c));
    if (!c)
        return BC_ERR_NOMEM;
    settings_copy(c, config);
    enum bc_status st = frontier_open(c, config);
    if (st != BC_OK)
        goto out_free;
    if (config->payload_dedup) {
        st = bc_payloads_create(&c->payloads);
        if (st == BC_OK && c->state)
            st = bc_crawl_state_payloads(c->state, payload_load_row, c);
        if (st != BC_OK)
            goto out_free_payloads;
    }
    /* Without a recrawl window no page is fetched twice, in this run or
     * a resume of its state (which pins the window): no row is kept. */
    c->conditional = config->conditional && config->recrawl_after_ms;
    c->lastmod =
        c->state && config->recrawl_after_ms && config->frontier.sitemaps;
    if (c->conditional && !c->state &&
        (st = bc_validators_create(&c->validators)) != BC_OK)
        goto out_free_payloads;

    c->near_mode = config->near_mode;
    bc_buf_init(&c->near_urls, 0);
    if (config->near_dedup) {
        struct bc_simhash_index_config ic;
        bc_simhash_index_config_init(&ic);
        ic.k = config->near_k;
        /* Sized for the seen-test's expected URLs (a fingerprint per
         * page at most), but for no more than NEAR_EXPECTED_MAX: the
         * index's bucket arrays are allocated whole at the start and
         * touched at random, so an --expect of 10^9 would reserve 10
         * tables of 2^25 or 2^26 buckets (8.6 GB) before the first
         * page. At
         * 10^7 and k = 3 it is 4 tables of 2^16 buckets, 4 MiB; more
         * pages than that only make a query compare more fingerprints
         * (n / 2^16 a table). */
        if (config->frontier.seen.expected)
            ic.n_expected = config->frontier.seen.expected;
        if (ic.n_expected > NEAR_EXPECTED_MAX)
            ic.n_expected = NEAR_EXPECTED_MAX;
        st = bc_simhash_index_create(&ic, &c->near);
        if (st == BC_OK && c->state)
            st = bc_crawl_state_fingerprints(c->state, near_load_row, c);
        if (st != BC_OK)
            goto out_free_payloads;
    }
    struct bc_fetcher_config xc = fetcher_config_of(c, config);
    st = bc_fetcher_create(&xc, &c->fetcher);
    if (st != BC_OK)
        goto out_free_payloads;
    *out = c;
    return BC_OK;

out_free_payloads:
    bc_validators_free(c->validators);
    bc_simhash_index_free(c->near);
    bc_buf_free(&c->near_urls);
    bc_payloads_free(c->payloads);
    hosts_free(c);
    bc_frontier_free(c->frontier);
out_free:
    free(c);
    return st;
}

void bc_crawler_free(struct bc_crawler *c)
{
    if (!c)
        return;
    /* The fetcher cancels its transfers without on_done: free ours. */
    bc_fetcher_free(c->fetcher);
    while (c->transfers) {
        struct transfer *t = c->transfers;
        c->transfers = t->next;
        transfer_free(t);
    }
    hosts_free(c);
    bc_frontier_free(c->frontier);
    bc_payloads_free(c->payloads);
    bc_validators_free(c->validators);
    bc_simhash_index_free(c->near);
    bc_buf_free(&c->near_urls);
    free(c);
}

enum bc_status bc_crawler_add_seed(struct bc_crawler *c, const char *url,
                                   size_t len, enum bc_frontier_reason *reason,
                                   enum bc_status *url_status)
{
    if (!c || !url)
        return BC_ERR_INVALID_ARG;
    enum bc_frontier_reason why = BC_ADMIT_STORE_ERROR;
    enum bc_status ust = BC_OK;
    recrawl_tick(c);
    enum bc_status st = bc_frontier_add_seed(c->frontier, url, len, &why, &ust);
    c->stats.seeds++;
    /* The frontier's store error (a state write, a route() that failed)
     * is its own reason, with the store's status: not out of memory. */
    if (st == BC_ERR_NOMEM)
        why = BC_ADMIT_NOMEM;
    else if (st != BC_OK)
        why = BC_ADMIT_STORE_ERROR;
    count_bad_url(c, why, ust);
    if (why == BC_ADMIT_QUEUED || why == BC_ADMIT_DUPLICATE)
        c->stats.seeds_admitted++;
    /* A seed routed to its owner: its scope is this worker's too, and
     * must survive a resume. */
    if ((why == BC_ADMIT_QUEUED || why == BC_ADMIT_ROUTED) && c->state &&
        c->state_status == BC_OK) {
        enum bc_status sst = bc_crawl_state_add_seed(c->state, url, len);
        if (sst != BC_OK)
            c->state_status = sst;
    }
    if (reason)
        *reason = why;
    if (url_status)
        *url_status = ust;
    return st;
}

enum bc_status bc_crawler_add_routed(struct bc_crawler *c, const char *url,
                                     size_t len, unsigned depth,
                                     unsigned redirects, const char *referrer,
                                     size_t referrer_len, bool seed,
                                     enum bc_frontier_reason *reason)
{
    if (!c || !url || (!referrer && referrer_len > 0) || c->in_step)
        return BC_ERR_INVALID_ARG;
    c->stats.routed_in++;
    if (seed)
        return bc_crawler_add_seed(c, url, len, reason, NULL);
    enum bc_frontier_reason why = BC_ADMIT_STORE_ERROR;
    enum bc_status ust = BC_OK;
    recrawl_tick(c);
    enum bc_status st =
        bc_frontier_add_routed(c->frontier, url, len, depth, redirects,
                               referrer, referrer_len, &why, &ust);
    if (st == BC_ERR_INVALID_ARG) /* a referrer longer than max_url_len */
        st = bc_frontier_add_routed(c->frontier, url, len, depth, redirects,
                                    NULL, 0, &why, &ust);
    if (st == BC_ERR_NOMEM)
        why = BC_ADMIT_NOMEM;
    count_bad_url(c, why, ust);
    if (reason)
        *reason = why;
    return st;
}

enum bc_status bc_crawler_add_scope(struct bc_crawler *c, const char *url,
                                    size_t len)
{
    if (!c || !url)
        return BC_ERR_INVALID_ARG;
    enum bc_status st = bc_frontier_restore_scope(c->frontier, url, len);
    if (st == BC_OK && c->state && c->state_status == BC_OK) {
        enum bc_status sst = bc_crawl_state_add_seed(c->state, url, len);
        if (sst != BC_OK)
            c->state_status = sst;
    }
    return st;
}

struct revisit {
    struct bc_crawler *c;
    uint64_t known, due;
    enum bc_status st;
};

static void revisit_one(void *ctx, const char *url, size_t len, unsigned depth)
{
    struct revisit *r = ctx;
    enum bc_frontier_reason why;
    if (r->st != BC_OK)
        return;
    r->known++;
    recrawl_tick(r->c);
    enum bc_status st =
        bc_frontier_add(r->c->frontier, url, len, NULL, 0, depth, &why, NULL);
    if (st == BC_ERR_NOMEM) {
        r->st = st;
    } else if (why == BC_ADMIT_QUEUED) {
        r->due++;
        /* Queued to be fetched now: a sitemap's <lastmod> before now
         * need not queue it again (LASTMOD). */
        if (r->c->lastmod) {
            size_t n;
            const char *u = bc_frontier_last_url(r->c->frontier, &n);
            if (u)
                fetched_put(r->c, u, n, recrawl_now_s(r->c));
        }
    }
}

enum bc_status bc_crawler_revisit(struct bc_crawler *c, uint64_t *known,
                                  uint64_t *due)
{
    if (!c || !c->state || !c->recrawl_clock || c->in_step)
        return BC_ERR_INVALID_ARG;
    struct revisit r = {c, 0, 0, BC_OK};
    enum bc_status st = bc_crawl_state_known(c->state, revisit_one, &r);
    if (st == BC_OK)
        st = r.st;
    if (known)
        *known = r.known;
    if (due)
        *due = r.due;
    return st;
}

void bc_crawler_stats(const struct bc_crawler *c, struct bc_crawler_stats *out)
{
    if (!out)
        return;
    if (!c) {
        memset(out, 0, sizeof(*out));
        return;
    }
    *out = c->stats;
    warc_counters(c, out);
    out->routed_out = routed_out(c);
    out->in_flight = bc_fetcher_in_flight(c->fetcher);
    out->intake = c->intake;
    out->payload_digests = bc_payloads_count(c->payloads);
    out->fingerprints = bc_simhash_index_count(c->near);
}

struct bc_frontier *bc_crawler_frontier(struct bc_crawler *c)
{
    return c ? c->frontier : NULL;
}
