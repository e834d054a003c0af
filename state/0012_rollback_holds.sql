-- Rollback holds (issue 22): a node `mesh rollback` sent an earlier generation again is held at
-- it, so `plan` and `push` leave it there until `mesh rollback NODE --release`. Not the hold of
-- a container's moving data, nor a rollout's stop: those last one push.
CREATE TABLE rollback_holds (
    node        TEXT PRIMARY KEY REFERENCES nodes(name) ON DELETE CASCADE,
    generation  INTEGER NOT NULL,  -- the generation it was rolled back to
    since       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);

-- The pushes a rollback made, with the generation each sent again: `mesh history` says so.
CREATE TABLE rollback_pushes (
    push_id     INTEGER PRIMARY KEY REFERENCES pushes(id),
    generation  INTEGER NOT NULL
);
