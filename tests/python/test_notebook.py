"""examples/notebooks/donor_pair.ipynb executes from top to bottom (nbclient)."""

import nbformat
from nbclient import NotebookClient

from conftest import ROOT


def test_the_donor_pair_notebook_runs(model_path):
    notebook = nbformat.read(ROOT / "examples" / "notebooks" / "donor_pair.ipynb", as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs)
    assert "sparse-global margin" in text and "total shift" in text
    assert any("image/png" in o.get("data", {}) for o in outputs)
