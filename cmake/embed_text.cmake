# Writes OUTPUT, a C++ source defining `const char* const SYMBOL` (in
# NAMESPACE) as the text of INPUT: a document served from memory (the
# server's OpenAPI description), kept as a plain file in the source tree.
file(READ ${INPUT} text)
string(FIND "${text}" ")embedded\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw string's delimiter")
endif()
file(WRITE ${OUTPUT} "// Generated from ${INPUT} by cmake/embed_text.cmake.\nnamespace ${NAMESPACE} {\nextern const char* const ${SYMBOL};\nconst char* const ${SYMBOL} = R\"embedded(${text})embedded\";\n}  // namespace ${NAMESPACE}\n")
