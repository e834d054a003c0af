-- Groups (issue 12): a node carries any number of tags; `@tag` selects every node carrying it.
CREATE TABLE tags (
    node  TEXT NOT NULL REFERENCES nodes(name) ON DELETE CASCADE,
    tag   TEXT NOT NULL,
    PRIMARY KEY (node, tag)
);
