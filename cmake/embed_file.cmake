# embed_file.cmake - turn a file into a C array, at build time.
#
#   cmake -DINPUT=page.html -DOUTPUT=page.inc -P embed_file.cmake
#
# OUTPUT holds the bytes of INPUT as a comma-separated list of hex
# constants, 16 to a line, then a terminating 0x00: include it between
# the braces of an array definition (examples/status_page.c does). CMake
# alone writes it, so the build needs no xxd. Run by add_custom_command
# (examples/CMakeLists.txt), which reruns it when INPUT changes.
if(NOT DEFINED INPUT OR NOT DEFINED OUTPUT)
    message(FATAL_ERROR "embed_file.cmake: -DINPUT=... -DOUTPUT=... needed")
endif()
file(READ "${INPUT}" hex HEX)
get_filename_component(name "${INPUT}" NAME)
# Two hex digits a byte: "3c21" -> "0x3c,0x21,", then a line break
# after every 16 bytes.
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}"
    "/* Generated from ${name} by cmake/embed_file.cmake: do not edit. */\n"
    "${bytes}\n0x00\n")
