-- Reaching machines (issue 12): a node's own jump hosts (`[user@]host[:port]`, a comma list;
-- NULL: none of its own, the ssh configuration's ProxyJump applies), and whether its port and
-- user were said explicitly (then they win over the ssh configuration). Nodes added before this
-- keep what they had: explicit.
ALTER TABLE nodes ADD COLUMN jump TEXT;
ALTER TABLE nodes ADD COLUMN port_given INTEGER NOT NULL DEFAULT 1;
ALTER TABLE nodes ADD COLUMN user_given INTEGER NOT NULL DEFAULT 1;
