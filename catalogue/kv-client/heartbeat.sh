#!/bin/sh
# Written by mesh (module kv-client, instance ${me.instance}). The store's password is read from
# its file on every beat, so a new one needs no restart; it is never on a command line.
while true; do
    REDISCLI_AUTH="$(cat '${home.path}/store-password')" \
        redis-cli -h '${store.host}' -p '${store.port}' SET 'heartbeat:${me.login}' "$(date +%s)" >/dev/null
    sleep ${interval}
done
