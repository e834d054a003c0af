-- Generations (issue 22): every inventory has an id, made here (at `init`, or the first time an
-- older file is opened), so that a machine can say which inventory pushed what it has. An
-- import into a new file makes a new one: it is another inventory.
CREATE TABLE inventory_id (
    id TEXT NOT NULL
);
INSERT INTO inventory_id (id) VALUES (lower(hex(randomblob(8))));

-- The generation each node's machine was last known at (by a push it confirmed or a check):
-- every push says it, and a machine at a newer one refuses the push as stale.
CREATE TABLE generations (
    node       TEXT PRIMARY KEY REFERENCES nodes(name) ON DELETE CASCADE,
    number     INTEGER NOT NULL,
    inventory  TEXT NOT NULL,    -- the id of the inventory that pushed it
    pushed_at  INTEGER NOT NULL  -- seconds since the epoch, by the machine's clock
);
