"""Solvers owned by the methods: the SQP-FW active set (:mod:`.active_set`), MDM's lazy
linear programme on HiGHS (:mod:`.lp`), and the batched simplex-constrained least squares
shared by LH-RELIEF and HKNN/CKNN (:mod:`.simplex_qp`)."""
