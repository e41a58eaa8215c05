"""Solvers owned by the methods: the SQP-FW active set (:mod:`.active_set`), MDM's linear
programmes (:mod:`.mdm_lp`: rows, pricing and the lazy constraint generation) with their two LP
solvers, a dense interior point (:mod:`.lp_ipm`) and HiGHS (:mod:`.lp_highs`), and the batched
simplex-constrained least squares shared by LH-RELIEF and HKNN/CKNN (:mod:`.simplex_qp`)."""
