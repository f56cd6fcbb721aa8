"""A cluster's nodes compared: gathering their snapshots over torch.distributed's store (`fleet collect`),
the fleet checks over them, and node-to-node bandwidth."""
