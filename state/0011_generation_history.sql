-- Generation history (issue 22): every generation a node's machine confirmed, with the
-- declaration exactly as it was sent (rendered; secrets stay sealed to the machine), so that a
-- generation does not depend on today's catalogue or settings.
CREATE TABLE generation_history (
    node        TEXT NOT NULL REFERENCES nodes(name) ON DELETE CASCADE,
    number      INTEGER NOT NULL,
    push_id     INTEGER NOT NULL REFERENCES pushes(id),
    inventory   TEXT NOT NULL,
    pushed_at   INTEGER NOT NULL,
    declaration TEXT NOT NULL,   -- as sent (JSON); never printed whole
    PRIMARY KEY (node, number)
);
CREATE INDEX generation_history_push ON generation_history (push_id);
