-- Push nonces (issue 22): every push to a node is given a random nonce that the generation it
-- makes on the machine carries, so that an inventory whose push went unanswered takes as its
-- own only the generation that push made, and never a later one a copy of the inventory (the
-- live one, when this one is restored from a backup) made since.
ALTER TABLE pushes ADD COLUMN nonce TEXT;
