suppressMessages(library(rpart))
args <- commandArgs(trailingOnly = TRUE)
out <- args[1]
data(kyphosis)
d <- kyphosis[, c("Age", "Number", "Start", "Kyphosis")]
write.csv(d, file.path(out, "kyphosis.csv"), row.names = FALSE, quote = FALSE)
n <- nrow(d)
groups <- seq_len(n)
ctl <- rpart.control(cp = 0, xval = n, maxcompete = 0, maxsurrogate = 0,
                     minsplit = 10, minbucket = 3)
ctl0 <- ctl; ctl0$xval <- 0
configs <- list(loss = matrix(c(0, 4, 1, 0), 2),   # L[true, pred]: present->absent 4
                none = matrix(c(0, 1, 1, 0), 2))
dump_tree <- function(fit, id) {
  fr <- fit$frame
  sp <- fit$splits
  internal <- fr$var != "<leaf>"
  ncat <- rep(NA, nrow(fr)); idx <- rep(NA, nrow(fr))
  ncat[internal] <- sp[, "ncat"]; idx[internal] <- sp[, "index"]
  data.frame(tree = id, node = as.integer(rownames(fr)), var = as.character(fr$var),
             n_absent = fr$yval2[, 2], n_present = fr$yval2[, 3], dev = fr$dev,
             complexity = fr$complexity * fr$dev[1], yval = fr$yval, ncat = ncat,
             index = idx)
}
for (name in names(configs)) {
  L <- configs[[name]]
  parms <- list(split = "gini")
  if (name == "loss") parms$loss <- L
  set.seed(1)
  fit <- rpart(Kyphosis ~ Age + Number + Start, data = d, method = "class",
               parms = parms, control = ctl)
  trees <- dump_tree(fit, 0)
  for (i in seq_len(n)) {
    fi <- rpart(Kyphosis ~ Age + Number + Start, data = d[-i, ], method = "class",
                parms = parms, control = ctl0)
    trees <- rbind(trees, dump_tree(fi, i))
  }
  write.csv(trees, file.path(out, paste0("trees_", name, ".csv")), row.names = FALSE)
  xp <- xpred.rpart(fit, xval = groups)
  y <- as.integer(d$Kyphosis)
  right <- apply(xp, 2, function(p) sum(L[cbind(y, p)]))
  transposed <- apply(xp, 2, function(p) sum(L[cbind(p, y)]))
  # The same leave-one-out by refitting (rpart(subset = -i), prune.rpart, predict) at the
  # cp values xpred.rpart uses, rescaled by the fold's weight as xval.c does.
  cps <- fit$cptable[, 1]
  cps <- sqrt(cps * c(10, cps[-length(cps)])); cps[1] <- (1 + cps[1]) / 2
  refit <- t(sapply(seq_len(n), function(i) {
    fi <- rpart(Kyphosis ~ Age + Number + Start, data = d[-i, ], method = "class",
                parms = parms, control = ctl0)
    a <- cps * fit$frame$dev[1] * (n - 1) / n
    sapply(a, function(ai) as.integer(predict(prune(fi, cp = ai / fi$frame$dev[1]), d[i, ],
                                              type = "vector")))
  }))
  cpt <- as.data.frame(fit$cptable)
  cpt$root_risk <- fit$frame$dev[1]
  cpt$xpred_loss_true_pred <- right
  cpt$xpred_loss_pred_true <- transposed
  cpt$refit_loss_true_pred <- apply(refit, 2, function(p) sum(L[cbind(y, p)]))
  cpt$refit_cells_differing_from_xpred <- colSums(refit != xp)
  write.csv(cpt, file.path(out, paste0("cptable_", name, ".csv")), row.names = FALSE)
  write.csv(xp, file.path(out, paste0("xpred_", name, ".csv")), row.names = FALSE)
}
cat(R.version.string, "; rpart", as.character(packageVersion("rpart")), "\n")
