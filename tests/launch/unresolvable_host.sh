#!/usr/bin/env bash
# unresolvable_host.sh COMMAND...: runs COMMAND (launch_by_hand.sh ... pgroups verify
# --backend gloo) in a UTS namespace whose host name resolves nowhere (.invalid, RFC 6761),
# with no GLOO_SOCKET_IFNAME: gloo's own rule then has no address to take. Exits 77
# (skipped) where UTS namespaces are refused (not root).
set -u
unshare --uts true 2>/dev/null || { echo "unresolvable_host.sh: SKIPPED: no UTS namespace here"; exit 77; }
exec env -u GLOO_SOCKET_IFNAME unshare --uts sh -c 'hostname pgroups-nowhere.invalid && exec "$@"' sh "$@"
