/*
 * bench_html_files.h - the HTML corpora of the benchmarks: every *.html
 * file under a directory (the Debian manuals under /usr/share/doc), found
 * by a recursive walk in readdir order. bench_links and bench_simhash
 * read the same pages through it.
 */
#ifndef BC_BENCH_HTML_FILES_H
#define BC_BENCH_HTML_FILES_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Call fn(path, size) for each regular *.html file under dir (hidden
 * entries, paths over 4095 bytes and directories that cannot be opened
 * are skipped). */
static inline void bench_html_files(const char *dir,
                                    void (*fn)(const char *path, size_t size))
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        int len = snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (len < 0 || (size_t)len >= sizeof(path))
            continue; /* a path too long to name: skipped */
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        size_t n = strlen(e->d_name);
        if (S_ISDIR(st.st_mode))
            bench_html_files(path, fn);
        else if (n > 5 && strcmp(e->d_name + n - 5, ".html") == 0)
            fn(path, (size_t)st.st_size);
    }
    closedir(d);
}

#endif /* BC_BENCH_HTML_FILES_H */
