-- The catalogue folders the inventory was set up with (`mesh init --catalogue DIR`,
-- `mesh catalogue add DIR`), in the order they are read: a push from cron, with no environment,
-- reads the same modules as the operator's shell.
CREATE TABLE catalogue_folders (
    position INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE
);
