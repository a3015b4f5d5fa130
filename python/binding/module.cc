#include <nanobind/nanobind.h>

#include "bindings.h"
#include "util/error.h"

NB_MODULE(_eventkv, m) {
  m.doc() = "eventkv's C++ engine: models, event histories and donor-pair experiments";
  // Errors keep the library's one-line messages.
  const nanobind::exception<eventkv::Error> error_type(m, "Error", PyExc_RuntimeError);
  eventkv::python::bind_model(m);
  eventkv::python::bind_history(m);
  eventkv::python::bind_experiments(m);
}
