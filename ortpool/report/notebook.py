"""The reports of the Python API: :class:`Report`, what every report shares, and
:class:`ValidationReport`, ``ortpool.validate``'s."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from ortpool import values
from ortpool.report import html as html_report
from ortpool.report import record as results
from ortpool.report import terminal
from ortpool.report.text import Printed, plural, preformatted


class Report(Printed):
    """What the API's reports share; a subclass gives ``exit_code``, ``summary_lines()``,
    ``to_dict()`` and ``_describe()`` (the ``repr``'s words)."""

    exit_code: int

    @property
    def ok(self) -> bool:
        """True when the command would exit 0."""
        return self.exit_code == 0

    def summary(self) -> str:
        """A few lines: the verdict and what does not agree (names made safe to print)."""
        return str(self)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self._describe()}, exit {self.exit_code}>"

    def _repr_html_(self) -> str:
        """A notebook's view: the summary as preformatted text."""
        return preformatted(self.summary())


@dataclasses.dataclass(repr=False, eq=False)  # equal to itself only
class ValidationReport(Report):
    """Every model validated: ``models`` (:class:`ortpool.validate.ModelResult`, in the order
    given; ``report[0]``, ``len(report)``, ``for model in report``), the run's settings."""

    models: list[results.ModelResult]
    settings: dict[str, Any] = dataclasses.field(default_factory=dict)
    fail_on_rulings: bool = False

    @property
    def exit_code(self) -> int:
        """As ``ortpool validate`` exits: 0 all agree, 1 one differs, 2 one was not validated."""
        return results.exit_code(self.models, self.fail_on_rulings)

    @property
    def differing(self) -> list[results.ModelResult]:
        """The models that differ (validated, with a difference from the spec)."""
        return [m for m in self.models if not m.outcome and m.failing]

    @property
    def bases(self) -> dict[str, int]:
        """The differing nodes by basis: ``{"spec text": 2, "ruling 7": 1}``."""
        return results.bases(results.all_nodes(self.models))

    def summary_lines(self) -> list[str]:
        """The models that do not agree (at most 10, a line each), then the run's lines."""
        shown = [m for m in self.models if m.status != results.AGREE]
        lines = [line for m in shown[:10] for line in terminal.fit(terminal.model_line(m))]
        if len(shown) > 10:
            lines.append(f"... and {len(shown) - 10} more (report.report() lists every one)")
        return [*lines, *terminal.information_lines(self.models, "nonfinite=True"),
                *terminal.summary_lines(self.models)]

    def report(self, verbose: bool = False) -> str:
        """The terminal report ``ortpool validate`` prints (``verbose``: as with ``-v``)."""
        verbose = values.flag("verbose", verbose)  # 'false' is a true value to Python
        return "\n".join(terminal.report(self.models, verbose, "nonfinite=True"))

    def to_dict(self) -> dict[str, Any]:
        """The JSON report's document (``ortpool validate --json``)."""
        return results.validate_document(self.models, self.settings)

    def to_html(self) -> str:
        """The self-contained HTML report (``ortpool validate --html``)."""
        return html_report.render(self.models, self.settings)

    def _repr_html_(self) -> str:
        """The summary table (no links), then each model that does not agree, its findings."""
        shown = [m for m in self.models if m.status != results.AGREE and not m.outcome]
        found = "".join(f"<p><b>{html_report.name(m.path, 100)}</b></p>{html_report.findings(m)}"
                        for m in shown[:10])
        return html_report.summary(self.models, links=False, after=found)

    def _describe(self) -> str:
        text = plural(len(self.models), "model")
        if differing := self.differing:
            nodes = sum(1 for m in differing for n in m.nodes if n.failing)
            text += f", {len(differing)} differ" + ("s" if len(differing) == 1 else "")
            text += f" ({plural(nodes, 'node')})" if nodes else " (end to end)"
        if not_run := sum(1 for m in self.models if m.outcome):
            text += f", {not_run} not validated"
        return text

    def __len__(self) -> int:
        return len(self.models)

    def __iter__(self) -> Iterator[results.ModelResult]:
        return iter(self.models)

    def __getitem__(self, index: int) -> results.ModelResult:
        return self.models[index]
