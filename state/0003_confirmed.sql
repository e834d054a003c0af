-- What each node's helper confirmed it has, resource by resource (issue 11): the plan compares
-- with this, not with the whole declaration last sent, so a refused or failed resource stays in
-- the next plan. A push is recorded as it happens: its row is written with outcome 'in-flight'
-- before the declaration is sent and finished the moment that node answers; a row still
-- 'in-flight' is a push that was interrupted (the operator killed, the inventory not writable).

CREATE TABLE confirmed (
    node      TEXT NOT NULL REFERENCES nodes(name) ON DELETE CASCADE,
    id        TEXT NOT NULL,        -- the resource's stable id
    position  INTEGER NOT NULL,     -- its place in the declaration it was confirmed from
    push_id   INTEGER NOT NULL REFERENCES pushes(id),
    resource  TEXT NOT NULL,        -- the resource as sent (JSON); never printed
    PRIMARY KEY (node, id)
);

-- What an older mesh last sent is the best it knew of what the machine has.
INSERT INTO confirmed (node, id, position, push_id, resource)
    SELECT s.node, json_extract(r.value, '$.id'), r.key, s.push_id, r.value
    FROM sent AS s, json_each(s.declaration, '$.resources') AS r;

-- One copy of what a machine has: the whole declaration last sent is no longer kept.
DROP TABLE sent;
