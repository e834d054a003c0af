-- The first schema: nodes, assignments, settings layers with their history, and pushes.

CREATE TABLE nodes (
    name      TEXT PRIMARY KEY,
    address   TEXT NOT NULL,
    port      INTEGER NOT NULL DEFAULT 22,
    user      TEXT NOT NULL DEFAULT 'root',
    identity  TEXT,                 -- private key file; NULL: ssh-agent, then ~/.ssh/id_*
    sudo      INTEGER NOT NULL DEFAULT 0,
    host_key  TEXT,                 -- the pinned public key, OpenSSH form ("ssh-ed25519 AAAA...")
    lab       INTEGER NOT NULL DEFAULT 0,
    added_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);

CREATE TABLE assignments (
    node        TEXT NOT NULL REFERENCES nodes(name) ON DELETE CASCADE,
    instance    TEXT NOT NULL,
    module      TEXT NOT NULL,
    assigned_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    PRIMARY KEY (node, instance)
);

-- A module's settings layers: node '' is the mesh-wide layer, any other the node's.
CREATE TABLE layers (
    module  TEXT NOT NULL,
    node    TEXT NOT NULL DEFAULT '',
    body    TEXT NOT NULL,          -- a JSON object: setting -> value
    set_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    PRIMARY KEY (module, node)
);

-- Every set and clear keeps the layer it replaced.
CREATE TABLE layer_history (
    id        INTEGER PRIMARY KEY,
    module    TEXT NOT NULL,
    node      TEXT NOT NULL DEFAULT '',
    replaced  TEXT,                 -- the layer before (JSON), NULL when there was none
    action    TEXT NOT NULL,        -- 'set' or 'clear'
    at        TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);

-- Every push to every node, and how it ended.
CREATE TABLE pushes (
    id           INTEGER PRIMARY KEY,
    node         TEXT NOT NULL,
    started_at   TEXT NOT NULL,
    finished_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    digest       TEXT NOT NULL,
    outcome      TEXT NOT NULL,     -- applied | failed
    reason       TEXT,              -- why it failed
    report       TEXT               -- the helper's JSON report, when it answered
);

-- What each node was last sent (and the helper answered): read only to compare with.
CREATE TABLE sent (
    node         TEXT PRIMARY KEY REFERENCES nodes(name) ON DELETE CASCADE,
    push_id      INTEGER NOT NULL REFERENCES pushes(id),
    digest       TEXT NOT NULL,
    declaration  TEXT NOT NULL
);
