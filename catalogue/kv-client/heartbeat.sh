#!/bin/sh
# Written by mesh (module kv-client, instance ${me.instance}). Its password is read from its file
# on every beat, so a new one needs no restart; it is never on a command line. The store lets
# this login write only keys under "${store.login}:".
while true; do
    REDISCLI_AUTH="$(cat '${home.path}/store-password')" \
        redis-cli -h '${store.host}' -p '${store.port}' --user '${store.login}' \
        SET '${store.login}:heartbeat' "$(date +%s)" >/dev/null
    sleep ${interval}
done
