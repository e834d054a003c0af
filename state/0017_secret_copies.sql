-- Each secret content a confirmed push sent, sealed to the operator's key and found by its keyed
-- digest: what the machine was sent is sealed to its host key of that day, so a rollback to a
-- generation made before the machine was rebuilt (a new host key) seals it again from here.
CREATE TABLE secret_copies (
    digest TEXT PRIMARY KEY,
    sealed TEXT NOT NULL
);
