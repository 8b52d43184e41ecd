-- Server-side functions of the PostgreSQL store: a commit is one call of fence.commit_1, so that a verdict
-- costs a round trip for its snapshot, one for its writes and one for the commit, however many statements
-- the writes take. Each function starts under a "-- name:" line and is created by CREATE OR REPLACE.
--
-- The functions are not part of schema_info's version: their names carry their own version. A fence that
-- needs a changed function adds it under a new name (commit_2), so that fences of both versions can share a
-- store while hosts upgrade one by one. A store made before a function existed gets it from the first
-- fence that calls it (PostgresLeaseStore.createFunctions), under the schema's advisory lock.
--
-- Both run with the caller's rights (SECURITY INVOKER), in the caller's transaction, which the caller
-- commits. Every name is schema-qualified.

-- Appends ledger events, in array order, except those whose group (e_group, NULL for none) is in p_left_out,
-- and returns the database's clock in epoch ms, read after any lock the caller's transaction waited for. An
-- event whose time is NULL is dated with that clock (the store's time); the caller passes times only when
-- they were read from the store's clock already, or a test's clock decides (StoreOptions.callerClock).
-- name: append_1
CREATE OR REPLACE FUNCTION fence.append_1(
    e_group integer[], p_left_out integer[],
    e_at bigint[], e_type text[], e_resource text[], e_repo text[], e_ref text[], e_holder text[],
    e_pusher text[], e_token bigint[], e_old_sha text[], e_new_sha text[], e_reason text[], e_detail bytea[])
RETURNS bigint
LANGUAGE plpgsql VOLATILE
AS $fn$
DECLARE
    now_ms bigint := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
BEGIN
    -- Sorted by position, so the identity column numbers the events in the order the caller gave them.
    INSERT INTO fence.events (at, type, resource, repo, ref, holder, pusher, token, old_sha, new_sha, reason,
                              detail)
    SELECT coalesce(e.at, now_ms), e.type, e.resource, e.repo, e.ref, e.holder, e.pusher, e.token, e.old_sha,
           e.new_sha, e.reason, e.detail
      FROM unnest(e_group, e_at, e_type, e_resource, e_repo, e_ref, e_holder, e_pusher, e_token, e_old_sha,
                  e_new_sha, e_reason, e_detail)
           WITH ORDINALITY AS e(grp, at, type, resource, repo, ref, holder, pusher, token, old_sha, new_sha,
                                reason, detail, ord)
     WHERE e.grp IS NULL OR e.grp <> ALL (p_left_out)
     ORDER BY e.ord;
    RETURN now_ms;
END
$fn$

-- Applies commits, each a group of writes and events, in one transaction, each all or nothing, as if each
-- had been a transaction of its own. w_group and e_group give the group (1 to p_groups) of each write and
-- each event; the other w_ and e_ arrays are indexed alike. No resource may be written twice in one call:
-- the caller puts commits that share a resource in different calls. The caller passes whether the
-- identity's marker matches the live server and, if it does, the identity's generation and version base,
-- all read in the same statement.
--
-- One row comes back per group, in group order, o_outcome being:
--   'identity'   the marker does not match (every group): the caller starts a new generation and calls again;
--   'conflict'   o_resource was decided under another generation, or its version is not the one expected;
--   'lowered'    o_resource's write would lower its counter (o_latest_granted) or its highest accepted
--                token (o_highest_accepted): a bug of the caller;
--   'committed'  written; o_now is the database's clock after the locks (ledger times and retention).
-- A group that is not committed changes nothing. The checks run in that order over all of a group's writes,
-- each reporting the group's first write (in array order) that fails it. Every row lock is taken before any
-- write, in name order, as everywhere in the store, so two calls cannot deadlock. A lease of another
-- generation is void: a write that keeps the lease clears a void one. A handful of statements whatever the
-- number of commits: this is what makes a shared transaction cheaper than one per commit.
-- name: commit_1
CREATE OR REPLACE FUNCTION fence.commit_1(
    p_matches boolean, p_generation text, p_version_base bigint, p_groups integer,
    w_group integer[], w_resource text[], w_generation text[], w_expected bigint[], w_latest bigint[],
    w_highest bigint[], w_clear_lease boolean[], w_base_token bigint[], w_base_sha text[], w_last_sha text[],
    w_tip_sha text[], w_tip_token bigint[], w_tip_holder text[], w_tip_pusher text[], w_tip_at bigint[],
    e_group integer[], e_at bigint[], e_type text[], e_resource text[], e_repo text[], e_ref text[],
    e_holder text[], e_pusher text[], e_token bigint[], e_old_sha text[], e_new_sha text[], e_reason text[],
    e_detail bytea[])
RETURNS TABLE (o_group integer, o_outcome text, o_resource text, o_latest_granted bigint,
               o_highest_accepted bigint, o_now bigint)
LANGUAGE plpgsql VOLATILE
AS $fn$
DECLARE
    n integer := coalesce(cardinality(w_resource), 0);
    names integer;
    locked integer;
    failed integer[];
    f_kind integer[];
    f_resource text[];
    f_latest bigint[];
    f_highest bigint[];
    now_ms bigint;
BEGIN
    IF cardinality(w_group) IS DISTINCT FROM cardinality(w_resource)
            OR cardinality(e_group) IS DISTINCT FROM cardinality(e_type)
            OR EXISTS (SELECT 1 FROM unnest(w_group || e_group) x WHERE x IS NULL OR x < 1 OR x > p_groups) THEN
        RAISE EXCEPTION 'fence.commit_1: a write or event belongs to no group of 1 to %', p_groups;
    END IF;
    IF NOT coalesce(p_matches, false) THEN
        RETURN QUERY SELECT x, 'identity'::text, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint
                       FROM generate_series(1, p_groups) x;
        RETURN;
    END IF;
    SELECT count(DISTINCT x) INTO names FROM unnest(w_resource) x;
    IF names < n THEN
        RAISE EXCEPTION 'fence.commit_1: a resource is written twice in one call';
    END IF;
    IF n > 0 THEN
        PERFORM 1 FROM fence.resources s WHERE s.resource = ANY (w_resource) ORDER BY s.resource FOR UPDATE;
        GET DIAGNOSTICS locked = ROW_COUNT;
        IF locked < n THEN
            -- Rows for resources seen for the first time; DO NOTHING waits for a concurrent insert of the
            -- same name and never changes a row that exists.
            INSERT INTO fence.resources (resource, version, latest_granted, highest_accepted, base_token)
            SELECT x, 0, 0, 0, 0 FROM unnest(w_resource) AS x ORDER BY x COLLATE "C"
            ON CONFLICT (resource) DO NOTHING;
            PERFORM 1 FROM fence.resources s WHERE s.resource = ANY (w_resource) ORDER BY s.resource FOR UPDATE;
            GET DIAGNOSTICS locked = ROW_COUNT;
            IF locked < n THEN
                RAISE EXCEPTION 'fence.commit_1: % of % resources have no row after creating them', n - locked, n;
            END IF;
        END IF;
    END IF;
    -- Each write's first failing check (1 generation, 2 version, 3 lowering); each group's first failure.
    SELECT coalesce(array_agg(f.grp ORDER BY f.grp), '{}'), array_agg(f.kind ORDER BY f.grp),
           array_agg(f.r ORDER BY f.grp), array_agg(f.latest_granted ORDER BY f.grp),
           array_agg(f.highest_accepted ORDER BY f.grp)
      INTO failed, f_kind, f_resource, f_latest, f_highest
      FROM (SELECT DISTINCT ON (w.grp) w.grp, w.kind, w.r, w.latest_granted, w.highest_accepted
              FROM (SELECT u.grp, u.ord, u.r, s.latest_granted, s.highest_accepted,
                           CASE WHEN u.gen IS DISTINCT FROM p_generation THEN 1
                                WHEN s.version + p_version_base <> u.expected THEN 2
                                WHEN u.latest < s.latest_granted OR u.highest < s.highest_accepted THEN 3
                           END AS kind
                      FROM unnest(w_group, w_resource, w_generation, w_expected, w_latest, w_highest)
                           WITH ORDINALITY AS u(grp, r, gen, expected, latest, highest, ord)
                      JOIN fence.resources s ON s.resource = u.r) w
             WHERE w.kind IS NOT NULL
             ORDER BY w.grp, w.kind, w.ord) f;
    IF n > 0 THEN
        UPDATE fence.resources s
           SET version = s.version + 1,
               latest_granted = w.latest,
               highest_accepted = w.highest,
               lease_generation = CASE WHEN w.keep THEN s.lease_generation END,
               lease_holder = CASE WHEN w.keep THEN s.lease_holder END,
               lease_token = CASE WHEN w.keep THEN s.lease_token END,
               lease_granted_at = CASE WHEN w.keep THEN s.lease_granted_at END,
               lease_expires_at = CASE WHEN w.keep THEN s.lease_expires_at END,
               lease_released = CASE WHEN w.keep THEN s.lease_released END,
               lease_grant_sha = CASE WHEN w.keep THEN s.lease_grant_sha END,
               base_token = w.base_token,
               base_sha = w.base_sha,
               last_token_write_sha = w.last_sha,
               tip_sha = w.tip_sha,
               tip_token = w.tip_token,
               tip_holder = w.tip_holder,
               tip_pusher = w.tip_pusher,
               tip_at = w.tip_at
          FROM (SELECT u.*,
                       NOT u.clear_lease AND t.lease_token IS NOT NULL AND t.lease_generation = p_generation AS keep
                  FROM unnest(w_group, w_resource, w_latest, w_highest, w_clear_lease, w_base_token, w_base_sha,
                              w_last_sha, w_tip_sha, w_tip_token, w_tip_holder, w_tip_pusher, w_tip_at)
                       AS u(grp, r, latest, highest, clear_lease, base_token, base_sha, last_sha, tip_sha,
                            tip_token, tip_holder, tip_pusher, tip_at)
                  JOIN fence.resources t ON t.resource = u.r
                 WHERE u.grp <> ALL (failed)) w
         WHERE s.resource = w.r;
    END IF;
    now_ms := fence.append_1(e_group, failed, e_at, e_type, e_resource, e_repo, e_ref, e_holder, e_pusher, e_token,
                             e_old_sha, e_new_sha, e_reason, e_detail);
    RETURN QUERY
        SELECT x,
               CASE f.kind WHEN 3 THEN 'lowered' WHEN 1 THEN 'conflict' WHEN 2 THEN 'conflict' ELSE 'committed' END,
               f.resource,
               f.latest_granted,
               f.highest_accepted,
               CASE WHEN f.kind IS NULL THEN now_ms END
          FROM generate_series(1, p_groups) x
          LEFT JOIN unnest(failed, f_kind, f_resource, f_latest, f_highest)
                    AS f(grp, kind, resource, latest_granted, highest_accepted) ON f.grp = x
         ORDER BY x;
END
$fn$
