-- Requirements (design 27): what answers each one is kept here so it stays stable.
--
-- From this migration on, a node's settings layer belongs to the assignment: in `layers` and
-- `layer_history` the column `module` holds the instance's name when `node` is not '' (the
-- mesh-wide layer, node '', is still the module's). An instance named like its module, which
-- every assignment made before this migration is, reads the same either way.

-- Where the host's directories go when nothing places them: <root>/<instance>/<name>.
ALTER TABLE nodes ADD COLUMN root TEXT NOT NULL DEFAULT '/srv/mesh';

-- `mesh place INSTANCE NODE NAME=PATH`: one directory put elsewhere.
CREATE TABLE placements (
    node      TEXT NOT NULL,
    instance  TEXT NOT NULL,
    name      TEXT NOT NULL,
    path      TEXT NOT NULL,
    PRIMARY KEY (node, instance, name),
    FOREIGN KEY (node, instance) REFERENCES assignments(node, instance) ON DELETE CASCADE
);

-- A port the host gave an instance's requirement: allocated once, never two on one port.
CREATE TABLE ports (
    node      TEXT NOT NULL REFERENCES nodes(name) ON DELETE CASCADE,
    instance  TEXT NOT NULL,
    name      TEXT NOT NULL,
    port      INTEGER NOT NULL,
    PRIMARY KEY (node, instance, name),
    UNIQUE (node, port)
);

-- `mesh assign … --pin REQ=INSTANCE@NODE`: a consumer coupled to one provider.
CREATE TABLE pins (
    node              TEXT NOT NULL,
    instance          TEXT NOT NULL,
    requirement       TEXT NOT NULL,
    provider_instance TEXT NOT NULL,
    provider_node     TEXT NOT NULL,
    PRIMARY KEY (node, instance, requirement),
    FOREIGN KEY (node, instance) REFERENCES assignments(node, instance) ON DELETE CASCADE
);

-- `mesh seat set SEAT INSTANCE@NODE`: the mesh's one answer for a provision.
CREATE TABLE seats (
    seat      TEXT PRIMARY KEY,
    instance  TEXT NOT NULL,
    node      TEXT NOT NULL,
    set_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);

-- A secret field a provider generates (a password): made once, never printed.
CREATE TABLE secrets (
    node       TEXT NOT NULL REFERENCES nodes(name) ON DELETE CASCADE,
    instance   TEXT NOT NULL,
    provision  TEXT NOT NULL,
    field      TEXT NOT NULL,
    value      TEXT NOT NULL,
    PRIMARY KEY (node, instance, provision, field)
);
