-- Facts (issue 24): what each node's machine last said it is (distribution, memory, addresses),
-- answered by its helper on every push and check. `latest` is the last answer, `pushed` what the last
-- push was rendered against (what was known when it was planned), so a plan can say which facts moved since.
CREATE TABLE facts (
    node      TEXT PRIMARY KEY REFERENCES nodes(name) ON DELETE CASCADE,
    latest    TEXT NOT NULL,    -- JSON, as the helper last answered it
    seen_at   INTEGER NOT NULL, -- seconds since the epoch, by the operator's clock
    pushed    TEXT             -- JSON: the facts the last push was rendered against
);
