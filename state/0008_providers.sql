-- Providers (issue 14): an inventory records the public recipient of the operator's key its
-- secrets are sealed to, so that it finds its own key among several (one per inventory) and
-- never takes another inventory's. One row at most; none in an inventory an older mesh made
-- (its key is then recorded the first time it is seen to open the inventory's secrets).
CREATE TABLE operator_key (
    recipient TEXT NOT NULL
);
