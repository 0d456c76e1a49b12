// Table shapes of the cluster: its nodes, which node holds each number, and the changes of holder,
// as both dialects store them; see schema.ts.

/** A gateway process that runs (or ran) sessions: one row per start, heartbeating while it lives. */
export interface ClusterNodesTable {
  /** Fresh for every start, so that a restarted process never inherits its predecessor's leases. */
  id: string;
  /** WAGW_NODE_NAME (the host name by default): what the operator calls the machine. */
  name: string;
  /** Where other nodes reach this one (WAGW_NODE_URL); null on a single node. */
  url: string | null;
  /**
   * 'server' for `wagw serve`, which takes a fair share of the numbers; 'command' for a CLI
   * command that holds a number only while it runs (linking), and is left out of the shares.
   */
  role: string;
  hostname: string;
  pid: number;
  started_at: number;
  heartbeat_at: number;
  /** Set by a clean stop; a node whose heartbeat stopped without it died. */
  stopped_at: number | null;
  /**
   * Until when every lease that names this node is live (the database's clock on PostgreSQL):
   * one renewal writes this row alone. Once it has passed, it is never moved forward again.
   */
  lease_expires_at: number;
}

/** Which node holds a number's session (live while that node's lease_expires_at is ahead) and the fencing epoch of that holding. */
export interface NumberLeasesTable {
  number_id: string;
  /** Null when released or never held. */
  node_id: string | null;
  /** Grows by one on every change of owner; owner-only writes carry it and a stale one is refused. */
  epoch: number;
  /** A node that asked for the number, to balance the load; the holder hands it over at its next tick. */
  wanted_by: string | null;
}

/** A change of a number's owner, for the Cluster page and `wagw cluster status`. */
export interface LeaseChangesTable {
  id: string;
  number_id: string;
  phone: string;
  from_node_id: string | null;
  to_node_id: string | null;
  epoch: number;
  /** 'claimed', 'taken_over' (the previous lease had expired), 'released' or 'handed_over'. */
  reason: string;
  at: number;
}
