-- Rollouts (issue 21): a push in waves is recorded as it goes, so that one stopped by its
-- failure budget, or cut short by a killed operator, can be resumed with the nodes not yet done.
CREATE TABLE rollouts (
    id INTEGER PRIMARY KEY,
    started_at TEXT NOT NULL,
    -- running, stopped or done
    state TEXT NOT NULL,
    -- the failure that stopped it
    stopped_by TEXT
);
CREATE TABLE rollout_nodes (
    rollout INTEGER NOT NULL REFERENCES rollouts(id),
    node TEXT NOT NULL,
    wave INTEGER NOT NULL,
    canary INTEGER NOT NULL,
    -- null until the node's push answers: applied, failed, unreachable, held, refused
    outcome TEXT,
    PRIMARY KEY (rollout, node)
);
