"""Actions that write a timeline instant, all on one commit protocol (commit.py): begin -> markers -> write ->
reconcile -> complete | abort. Actions never import each other; the transaction layer (pyhudi.transaction) and
the client (pyhudi.client) sit above them."""
