# The IDSVM set codes, event kinds and tolerances: one definition for the compiled twin
# (refsvm/idsvm/_incremental_svm.pyx cimports them, and exposes them to Python as
# ``CONSTANTS``).  Their reference values are the module constants of
# refsvm/idsvm/incremental_svm.py; tests/idsvm/test_twins.py checks that the two agree.
# (Not DEF: DEF is deprecated and cannot be shared between modules.)

# set membership codes
cdef enum:
    GONE = -1      # unlearned
    REST = 0       # R: alpha = 0, g >= 0
    MARGIN = 1     # S: 0 <= alpha <= C, g = 0
    ERROR = 2      # E: alpha = C, g <= 0
    OUT = 3        # stored, not (or no longer) learned

# event kinds: the candidate's own (they end the operation), then the others
cdef enum:
    EV_C_MARGIN = 0
    EV_C_BOUND = 1
    EV_C_ZERO = 2
    EV_S_OUT = 3
    EV_JOIN = 4

cdef extern from *:
    """
    /* refsvm.idsvm: tolerances (see refsvm/idsvm/incremental_svm.py for their meaning) */
    static const double REFSVM_IDSVM_EPS_RATE = 1e-12;
    static const double REFSVM_IDSVM_EPS_GAMMA = 1e-12;
    static const double REFSVM_IDSVM_EPS_G = 1e-12;
    static const double REFSVM_IDSVM_EPS_ALPHA = 1e-12;
    static const double REFSVM_IDSVM_EPS_RESIDUE = 1e-9;
    static const double REFSVM_IDSVM_EPS_DOUBT = 1e-6;
    static const double REFSVM_IDSVM_EPS_PIVOT_SCALE = 1e-13;
    static const double REFSVM_IDSVM_EPS_PIVOT_ABS = 1e-14;
    static const int REFSVM_IDSVM_N_REFINE = 3;
    static const double REFSVM_IDSVM_EPS_RESID = 1e-14;
    static const double REFSVM_IDSVM_EPS_REFACTOR = 1e-10;
    static const double REFSVM_IDSVM_DRIFT_REFRESH = 1e-12;
    static const double REFSVM_IDSVM_EPS_REPAIR = 1e-11;
    static const int REFSVM_IDSVM_N_REPAIR = 8;
    static const double REFSVM_IDSVM_EPS_KKT = 1e-9;
    static const int REFSVM_IDSVM_STEPS_PER_EXAMPLE = 50;
    static const double REFSVM_IDSVM_POLISH_CK = 1e5;
    static const int REFSVM_IDSVM_G_ULPS = 4;
    static const int REFSVM_IDSVM_A_ULPS = 64;
    static const int REFSVM_IDSVM_REPAIR_ULPS = 8;
    static const int REFSVM_IDSVM_SNAP_ULPS = 4;
    static const int REFSVM_IDSVM_KKT_ULPS = 32;
    static const int REFSVM_IDSVM_H_ULPS = 32;
    static const double REFSVM_IDSVM_EPS_MACH = 2.220446049250313e-16;
    """
    const double EPS_RATE "REFSVM_IDSVM_EPS_RATE"
    const double EPS_GAMMA "REFSVM_IDSVM_EPS_GAMMA"
    const double EPS_G "REFSVM_IDSVM_EPS_G"
    const double EPS_ALPHA "REFSVM_IDSVM_EPS_ALPHA"
    const double EPS_RESIDUE "REFSVM_IDSVM_EPS_RESIDUE"
    const double EPS_DOUBT "REFSVM_IDSVM_EPS_DOUBT"
    const double EPS_PIVOT_SCALE "REFSVM_IDSVM_EPS_PIVOT_SCALE"
    const double EPS_PIVOT_ABS "REFSVM_IDSVM_EPS_PIVOT_ABS"
    const int N_REFINE "REFSVM_IDSVM_N_REFINE"
    const double EPS_RESID "REFSVM_IDSVM_EPS_RESID"
    const double EPS_REFACTOR "REFSVM_IDSVM_EPS_REFACTOR"
    const double DRIFT_REFRESH "REFSVM_IDSVM_DRIFT_REFRESH"
    const double EPS_REPAIR "REFSVM_IDSVM_EPS_REPAIR"
    const int N_REPAIR "REFSVM_IDSVM_N_REPAIR"
    const double EPS_KKT "REFSVM_IDSVM_EPS_KKT"
    const int STEPS_PER_EXAMPLE "REFSVM_IDSVM_STEPS_PER_EXAMPLE"
    const double POLISH_CK "REFSVM_IDSVM_POLISH_CK"
    const int G_ULPS "REFSVM_IDSVM_G_ULPS"
    const int A_ULPS "REFSVM_IDSVM_A_ULPS"
    const int REPAIR_ULPS "REFSVM_IDSVM_REPAIR_ULPS"
    const int SNAP_ULPS "REFSVM_IDSVM_SNAP_ULPS"
    const int KKT_ULPS "REFSVM_IDSVM_KKT_ULPS"
    const int H_ULPS "REFSVM_IDSVM_H_ULPS"
    const double EPS_MACH "REFSVM_IDSVM_EPS_MACH"
