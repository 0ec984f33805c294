"""tap_check.py — the check the trace checkers share (check_report_html.py, memviz_check.py): one
"ok - NAME" / "not ok - NAME (DETAIL)" line per check (tests/run_tests.sh counts them), and the
count of those that failed."""


class Checks:
    """check(name, cond, detail=""): prints the check's line and returns cond. failures counts the
    checks that failed; label, when not None, heads every name ("LABEL: NAME")."""

    def __init__(self, label=None):
        self.failures = 0
        self.label = label

    def __call__(self, name, cond, detail=""):
        if self.label is not None:
            name = f"{self.label}: {name}"
        if cond:
            print(f"ok - {name}")
        else:
            self.failures += 1
            print(f"not ok - {name}" + (f" ({detail})" if detail else ""))
        return cond
