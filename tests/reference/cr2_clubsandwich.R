# Outside reference for CR2 standard errors and Bell–McCaffrey degrees of freedom (tests/_core/test_cr2.py).
#
# clubSandwich (Pustejovsky; CRAN, here Debian's r-cran-clubsandwich 0.5.8) on the intercept-only regression
# lm(y ~ 1) with vcov = "CR2" and test = "Satterthwaite" (the Bell–McCaffrey / Pustejovsky–Tipton degrees of
# freedom under the working-independence model). Regenerate from the repository root
# (apt-get install r-cran-clubsandwich r-cran-jsonlite):
#
#     Rscript tests/reference/cr2_clubsandwich.R
#
# Data sets: the published worked example of clubSandwich's documentation (?coef_test: R's ChickWeight,
# weight clustered by Chick; the data are copied into the output so the tests need no R), and the binary
# data sets of tests/reference/cr2_datasets.json.
suppressMessages({library(clubSandwich); library(jsonlite)})
fit_one <- function(y, cluster) {
  fit <- lm(y ~ 1)
  cr2 <- coef_test(fit, vcov = "CR2", cluster = cluster, test = "Satterthwaite")
  cr1 <- coef_test(fit, vcov = "CR1", cluster = cluster, test = "Satterthwaite")
  list(values = y, clusters = as.character(cluster), estimate = unname(coef(fit)[1]),
       se_cr2 = cr2$SE, df_cr2 = cr2$df_Satt, se_cr1_clubsandwich = cr1$SE)
}
data("ChickWeight", package = "datasets")
out <- list(generated_by = "tests/reference/cr2_clubsandwich.R",
            clubsandwich = as.character(packageVersion("clubSandwich")),
            ChickWeight_weight_by_Chick = fit_one(ChickWeight$weight, as.character(ChickWeight$Chick)))
sets <- fromJSON("tests/reference/cr2_datasets.json")
for (name in names(sets)) out[[name]] <- fit_one(as.numeric(sets[[name]]$values), as.character(sets[[name]]$clusters))
writeLines(toJSON(out, digits = NA, auto_unbox = TRUE), "tests/reference/cr2_clubsandwich.json")
